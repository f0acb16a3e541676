// The runtime may not include a backend: backends lie above it and only
// hand it BlockCompilers. The layering test compiles this with the runtime
// layer's include folder, and it must fail with the header not found.
#include "backends/common/compiling_backend.h"

int main() {
  return 0;
}
