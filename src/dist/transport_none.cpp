// Built when CMake found no MPI (or HONE_WITH_MPI=OFF): distributed tuning
// is unavailable, and says why.
#include "dist/transport.h"

namespace hone::dist {

std::string mpi_library() {
  return "";
}

std::string mpi_unavailable_reason() {
  return "hone was built without MPI (HONE_WITH_MPI=OFF, or CMake found no MPI: install "
         "libopenmpi-dev and configure again)";
}

Result<std::unique_ptr<Transport>> open_mpi() {
  return fail(ErrorCode::kUnsupported,
              "distributed tuning is unavailable: " + mpi_unavailable_reason());
}

}  // namespace hone::dist
