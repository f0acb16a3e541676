// `mpirun -np N hone tune ...` and `hone tune-many`: the command-line side of
// distributed tuning (hone/distributed.h). Launched alone, nothing changes.
// Under an MPI launcher, every error the command reports becomes the group's
// error (cli_common.h set_error_hook) for as long as the run is open.
//
//   HONE_TRY(auto run, open_dist_run(o.dist));
//   opts.group = run->group();                        // null when alone
//   HONE_TRY(std::string sha, run->save_agreed(tuned, out, save_options));
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "hone/distributed.h"

namespace hone::cli {

struct DistCliOptions {
  std::string distribute;  // "", "candidates" or "models"
  double timeout_s = 600;
};

/// --distribute WHAT (one of `choices`) and --dist-timeout SECONDS.
void add_dist_options(CLI::App& sub, DistCliOptions& o, const std::vector<std::string>& choices);

using DistRun = DistributedRun;

/// DistributedRun::open() for the command's options; in a group, error
/// reports go to every rank while the returned run lives.
[[nodiscard]] Result<std::shared_ptr<DistRun>> open_dist_run(const DistCliOptions& o);

}  // namespace hone::cli
