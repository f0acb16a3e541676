// A backend may not include another backend: aot reaching into onednn must
// fail to build with the aot layer's include folder.
#include "backends/onednn/plan.h"

int main() {
  return 0;
}
