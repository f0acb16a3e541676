// A pass may not include the tuner: tune lies above passes. The layering test
// compiles this with the passes layer's include folder, and it must fail with
// the header not found.
#include "tune/session.h"

int main() {
  return 0;
}
