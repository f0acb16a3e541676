// The interpreter may not include a pass: passes lie above eval. The layering
// test compiles this with the eval layer's include folder, and it must fail
// with the header not found.
#include "passes/rewrite.h"

int main() {
  return 0;
}
