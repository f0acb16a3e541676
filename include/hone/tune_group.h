// TuneGroup: several processes tuning one model together (distributed
// tuning). hone::tune knows the group only through this interface; src/dist
// implements it over MPI for `mpirun -np N hone tune`.
//
//   TuneOptions o;
//   o.group = &group;                      // every rank calls tune() with the same arguments
//   HONE_TRY(TunedModel m, hone::tune(graph, samples, MaxThroughput(), o));
//
// Every rank builds, checks and measures; after each candidate every rank
// calls agree_candidate() with its own result, in the same order, and gets
// back the group's (throughput the minimum, latency the maximum, correct only
// when correct everywhere), so every rank's strategy sees the same figures
// and makes the same choice. agree_report() hands every rank rank 0's report
// after checking that every rank reached the same decision. A rank that
// fails makes every rank's next call fail with that rank's error.
#pragma once

#include <vector>

#include "hone/error.h"
#include "hone/tune_report.h"

namespace hone {

class TuneGroup {
 public:
  virtual ~TuneGroup() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// Makes `r` (this rank's result of a candidate) the group's result.
  /// Errors: another rank failed, or the ranks are out of step.
  [[nodiscard]] virtual Result<void> agree_candidate(CandidateResult& r) = 0;
  /// Makes `s` rank 0's batch-size search (rank 0 decides the batch sizes).
  [[nodiscard]] virtual Result<void> agree_batch_search(BatchSearchResult& s) = 0;
  /// True when each rank evaluates only its share of the candidates (those
  /// at index i with i % size() == rank()) and share_candidates() gathers them.
  virtual bool split_candidates() const = 0;
  /// Every rank's share, all of them, in no particular order.
  [[nodiscard]] virtual Result<std::vector<CandidateResult>> share_candidates(
      const std::vector<CandidateResult>& mine) = 0;
  /// Checks that every rank holds the same decision (by hash; the kernel plan
  /// aside, as a backend may time alternatives while it plans) and makes `r`
  /// rank 0's report, plan included, so every rank saves the same package bytes.
  [[nodiscard]] virtual Result<void> agree_report(TuneReport& r) = 0;
};

}  // namespace hone
