// The command-line side of distributed tuning: see dist_cli.h.
#include "dist_cli.h"

#include "cli_common.h"

namespace hone::cli {

void add_dist_options(CLI::App& sub, DistCliOptions& o, const std::vector<std::string>& choices) {
  std::string list;
  for (const auto& c : choices) list += (list.empty() ? "" : ", ") + c;
  sub.add_option("--distribute", o.distribute,
                 "under mpirun: split the work between the ranks (" + list +
                     "); otherwise every rank does all of it and they agree")
      ->check(CLI::IsMember(choices))
      ->type_name("WHAT");
  sub.add_option("--dist-timeout", o.timeout_s,
                 "under mpirun: seconds a rank waits for the others at each step before failing")
      ->capture_default_str()
      ->check(CLI::PositiveNumber)
      ->type_name("SECONDS");
}

Result<std::shared_ptr<DistRun>> open_dist_run(const DistCliOptions& o) {
  HONE_TRY(
      std::unique_ptr<DistRun> opened,
      DistRun::open({.split_candidates = o.distribute == "candidates", .timeout_s = o.timeout_s}));
  std::shared_ptr<DistRun> run = std::move(opened);
  if (!run->alone())
    set_error_hook([weak = std::weak_ptr<DistRun>(run)](const Error& e) {
      const std::shared_ptr<DistRun> open = weak.lock();
      return open ? open->fail_everywhere(e) : e;
    });
  return run;
}

}  // namespace hone::cli
