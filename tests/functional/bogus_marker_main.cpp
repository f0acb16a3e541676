// A binary with a marker naming a cell that does not exist: its start-up
// must fail with "Unknown feature-matrix cell IDs", even when only listing.
#include "functional/backends.h"
#include "functional/matrix.h"

namespace hone::functional {
namespace {
class Bogus : public testing::TestWithParam<BackendCase> {};
HONE_MATRIX_TEST_P(Bogus, NamesAMissingCell, "lifecycle.teleport") {
  SUCCEED();
}
HONE_WITH_BACKENDS(Bogus);
}  // namespace
}  // namespace hone::functional
