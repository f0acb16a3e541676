// DistRun: see dist_cli.h.
#include "dist_cli.h"

#include <unistd.h>

#include <fmt/core.h>

#include "cli_common.h"
#include "dist/transport.h"
#include "hone/read_file.h"
#include "hone/sha256.h"
#include "hone/temp_paths.h"

namespace hone::cli {

namespace fs = std::filesystem;

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

std::string distributed_tuning_status() {
  const std::string why = dist::mpi_unavailable_reason();
  if (!why.empty()) return "distributed tuning (mpirun): unavailable: " + why;
  return "distributed tuning (mpirun): " + dist::mpi_library();
}

Result<std::unique_ptr<DistRun>> DistRun::open(const DistCliOptions& o) {
  std::unique_ptr<DistRun> run(new DistRun());
  HONE_TRY(run->launch_, dist::detect_launch());
  if (!run->launch_.by_mpirun) return run;
  if (const std::string why = dist::mpi_unavailable_reason(); !why.empty())
    return fail(ErrorCode::kUnsupported,
                fmt::format("started by an MPI launcher ({}), but distributed tuning is "
                            "unavailable: {}; each rank would tune alone",
                            run->launch_.evidence, why));
  dist::use_rank_resources(run->launch_);
  HONE_TRY(auto transport, dist::open_mpi());
  if (transport->rank() != run->launch_.rank)
    return fail(ErrorCode::kInternal,
                fmt::format("MPI says rank {}, the launcher said rank {} ({})", transport->rank(),
                            run->launch_.rank, run->launch_.evidence));
  run->group_ = std::make_unique<dist::Group>(
      std::move(transport), dist::GroupOptions{.split_candidates = o.distribute == "candidates",
                                               .timeout_s = o.timeout_s});
  dist::Group* g = run->group_.get();
  set_error_hook([g](const Error& e) { return g->fail_everywhere(e); });
  return run;
}

DistRun::~DistRun() {
  if (group_) set_error_hook(nullptr);
}

std::string DistRun::tag() const {
  return group_ ? fmt::format("rank {} of {}: ", rank(), size()) : "";
}

fs::path DistRun::cache_path(const std::string& given) const {
  if (given.empty() || !group_) return given;
  return dist::per_rank_path(given, rank());
}

Result<std::vector<std::string>> DistRun::exchange(std::string_view step,
                                                   const Result<std::string>& mine) {
  if (!group_) {
    if (!mine) return fail(mine.error());
    return std::vector<std::string>{*mine};
  }
  return group_->exchange(step, mine);
}

Result<void> DistRun::agree_model(const Graph& graph) {
  if (!group_) return {};
  HONE_TRY(auto all, exchange("model", graph_hash(graph)));
  for (size_t r = 1; r < all.size(); ++r)
    if (all[r] != all[0])
      return fail(ErrorCode::kInvalidArgument,
                  fmt::format("rank {} was given a different model than rank 0 (graph sha256 {} "
                              "vs {}): every rank must tune the same one",
                              r, all[r].substr(0, 16), all[0].substr(0, 16)));
  return {};
}

Result<std::string> DistRun::save_agreed(const TunedModel& model, const fs::path& file,
                                         const SaveOptions& options) {
  if (!group_) {
    HONE_CHECK_OK(hone::save(model, file, options));
    return std::string();
  }
  // Rank 0 writes the package; the others write the same bytes to a
  // temporary of their own (never the same file) only to hash them.
  Result<std::string> mine = [&]() -> Result<std::string> {
    fs::path where = file;
    std::unique_ptr<TempPathGuard> guard;
    if (group_ && rank() != 0) {
      std::error_code ec;
      const fs::path tmp = fs::temp_directory_path(ec);
      where = (ec ? fs::path("/tmp") : tmp) /
              fmt::format("hone-pkg-{}-rank{}-check.hone", ::getpid(), rank());
      guard = std::make_unique<TempPathGuard>(where);
    }
    auto saved = hone::save(model, where, options);
    auto bytes = saved ? read_regular_file(where, uint64_t{1} << 40)
                       : Result<std::vector<uint8_t>>(fail(saved.error()));
    if (where != file) {
      std::error_code ec;
      fs::remove(where, ec);
    }
    if (!bytes) return fail(bytes.error());
    return sha256_hex(
        std::string_view(reinterpret_cast<const char*>(bytes->data()), bytes->size()));
  }();
  HONE_TRY(auto all, exchange("package", mine));
  for (size_t r = 1; r < all.size(); ++r)
    if (all[r] != all[0]) {
      Error e(ErrorCode::kInternal,
              fmt::format("rank {}'s package bytes differ from rank 0's (sha256 {} vs {})", r,
                          all[r].substr(0, 16), all[0].substr(0, 16)));
      // Every rank compares the same sums: each fails alike, without telling.
      return fail(std::move(e));
    }
  return all[0];
}

}  // namespace hone::cli
