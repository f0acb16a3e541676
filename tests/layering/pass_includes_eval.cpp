// A pass may include the interpreter: eval lies beneath passes. The layering
// test compiles this with the passes layer's include folder, and it must build.
#include "eval/interpreter.h"

int main() {
  return 0;
}
