// The CLI is a user of the library: it sees the public headers and its own,
// never src/. The layering test compiles this with the hone_cli target's
// include folders, and it must fail with the header not found.
#include "eval/interpreter.h"

int main() {
  return 0;
}
