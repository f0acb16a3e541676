// `mpirun -np N hone tune ...` and `hone tune-many`: what a command does to
// run as one rank of a group. Launched alone, nothing changes (no MPI).
// Under an MPI launcher: MPI is initialised, the rank gets its own caches
// and GPU (dist/launch.h), every error report becomes the group's error
// (cli_common.h set_error_hook), and packages are written by rank 0 and
// checked byte for byte by the others.
//
//   HONE_TRY(auto run, DistRun::open(o.dist, "tune"));
//   opts.group = run->group();                        // null when alone
//   HONE_TRY(std::string sha, run->save_agreed(tuned, out, save_options));
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "dist/group.h"
#include "dist/launch.h"
#include "hone/package.h"
#include "hone/tune.h"

namespace hone::cli {

struct DistCliOptions {
  std::string distribute;  // "", "candidates" or "models"
  double timeout_s = 600;
};

/// --distribute WHAT (one of `choices`) and --dist-timeout SECONDS.
void add_dist_options(CLI::App& sub, DistCliOptions& o, const std::vector<std::string>& choices);

/// One line for `hone --version` and `hone backends`: the MPI library
/// distributed tuning uses, or why it is unavailable.
std::string distributed_tuning_status();

class DistRun {
 public:
  /// Alone: a run of one, no group. Under an MPI launcher: the group.
  /// Errors: launched by mpirun but built without MPI; MPI failing to start.
  [[nodiscard]] static Result<std::unique_ptr<DistRun>> open(const DistCliOptions& o);
  ~DistRun();
  DistRun(const DistRun&) = delete;
  DistRun& operator=(const DistRun&) = delete;

  /// Null when alone.
  dist::Group* group() { return group_.get(); }
  int rank() const { return launch_.rank; }
  int size() const { return group_ ? group_->size() : 1; }
  bool alone() const { return group_ == nullptr; }
  /// "rank 1 of 2: " in a group, else "".
  std::string tag() const;
  /// --cache FILE keyed by rank in a group (tuning.db -> tuning.rank1.db);
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
  /// An agreement point of the command's own (Group::exchange); alone: {mine}.
  [[nodiscard]] Result<std::vector<std::string>> exchange(std::string_view step,
                                                          const Result<std::string>& mine);

 private:
  DistRun() = default;
  dist::Launch launch_;
  std::unique_ptr<dist::Group> group_;
};

}  // namespace hone::cli
