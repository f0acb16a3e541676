// A backend may include the runtime's executor: runtime lies beneath the
// backends. The layering test compiles this with backends/common's include
// folder, and it must build.
#include "runtime/executor.h"

int main() {
  return 0;
}
