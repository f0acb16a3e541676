// The wire between ranks: one all-gather with a deadline. The only part of
// hone that includes <mpi.h> is transport_mpi.cpp; without MPI at build time
// transport_none.cpp says why distributed tuning is unavailable.
//
//   HONE_TRY(auto t, dist::open_mpi());                  // MPI_Init; MPI_Finalize on destruction
//   HONE_TRY(auto all, t->all_gather(mine, 600.0));    // every rank's bytes, index = rank
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "hone/error.h"

namespace hone::dist {

class Transport {
 public:
  virtual ~Transport() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// Every rank's `mine`, index = rank. Fails (kFailedPrecondition) when
  /// not every rank joined within `timeout_s`; the transport is then
  /// unusable, and the process should exit (mpirun ends the other ranks).
  [[nodiscard]] virtual Result<std::vector<std::string>> all_gather(const std::string& mine,
                                                                    double timeout_s) = 0;
};

/// Initialises MPI (once per process) over MPI_COMM_WORLD. Errors:
/// kUnsupported when hone was built without MPI, naming why.
[[nodiscard]] Result<std::unique_ptr<Transport>> open_mpi();

/// "Open MPI v4.1.4 ..." when built with MPI; empty otherwise.
std::string mpi_library();
/// Empty when built with MPI; else why distributed tuning is unavailable.
std::string mpi_unavailable_reason();

}  // namespace hone::dist
