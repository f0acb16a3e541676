// Distributed tuning: one process of a group that `mpirun -np N` started
// (hone_dist, linked by the CLI; libhone never sees MPI). Opened alone,
// nothing changes: a run of one, no group. Under an MPI launcher: MPI is
// initialised, the rank gets its own caches and GPU, and the ranks agree at
// each step (the model, every candidate's figures, the package's bytes).
//
//   HONE_TRY(auto run, DistributedRun::open({.split_candidates = true}));
//   options.group = run->group();                       // null when alone
//   HONE_TRY(std::string sha, run->save_agreed(tuned, out, save_options));
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hone/error.h"
#include "hone/graph.h"
#include "hone/package.h"
#include "hone/tune.h"
#include "hone/tune_group.h"

namespace hone {

struct DistributedOptions {
  bool split_candidates = false;  // each rank measures a share of the candidates
  double timeout_s = 600;         // per agreement point: how long a rank waits for the others
};

class DistributedRun {
 public:
  /// Alone: a run of one, no group. Under an MPI launcher: the group.
  /// Errors: launched by mpirun but built without MPI; MPI failing to start;
  /// MPI's rank differing from the launcher's.
  [[nodiscard]] static Result<std::unique_ptr<DistributedRun>> open(
      const DistributedOptions& options);
  ~DistributedRun();
  DistributedRun(const DistributedRun&) = delete;
  DistributedRun& operator=(const DistributedRun&) = delete;

  /// What tune() is given (TuneOptions::group); null when alone.
  TuneGroup* group();
  int rank() const;
  int size() const;
  bool alone() const;
  /// "rank 1 of 2: " in a group, else "".
  std::string tag() const;
  /// A cache file keyed by rank in a group (tuning.db -> tuning.rank1.db);
  /// empty stays empty (the default path is already per rank).
  std::filesystem::path cache_path(const std::string& given) const;
  /// Alone or on rank 0: saves the package. Other ranks save theirs to a
  /// temporary, and every rank checks its bytes' SHA-256 against rank 0's.
  /// Returns that SHA-256 (alone: empty, nothing to compare).
  [[nodiscard]] Result<std::string> save_agreed(const TunedModel& model,
                                                const std::filesystem::path& file,
                                                const SaveOptions& options);
  /// Every rank tunes the same model: its graph hash is rank 0's (alone: nothing to check).
  [[nodiscard]] Result<void> agree_model(const Graph& graph);
  /// An agreement point of the caller's own: every rank's data (index =
  /// rank) or the lowest failing rank's error; alone: {mine}.
  [[nodiscard]] Result<std::vector<std::string>> exchange(std::string_view step,
                                                          const Result<std::string>& mine);
  /// This rank failed: the others learn it at their next agreement point.
  /// Returns the group's error (the lowest failing rank's); alone: `error`.
  Error fail_everywhere(const Error& error);

 private:
  struct State;
  explicit DistributedRun(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

/// One line for `hone --version` and `hone backends`: the MPI library
/// distributed tuning uses, or why it is unavailable.
std::string distributed_tuning_status();

/// Hex SHA-256 of the decision's deterministic JSON (backend, config, kernel
/// plan, figures, reason, losers): what the ranks of a group compare.
std::string decision_hash(const Decision& decision);

}  // namespace hone
