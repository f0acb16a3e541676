// A binary whose capability set selects no backend: start-up must fail
// rather than run a silent zero-test suite.
#include "functional/backends.h"
#include "functional/matrix.h"

namespace hone::functional {
namespace {
class Nobody : public testing::TestWithParam<BackendCase> {};
HONE_MATRIX_TEST_P(Nobody, NeedsAnImpossibleCapability, "lifecycle.build") {
  SUCCEED();
}
HONE_WITH_BACKENDS(Nobody, "time-travel");
}  // namespace
}  // namespace hone::functional
