// DistributedRun (hone/distributed.h): a launch, and a group when there is one.
#include <unistd.h>

#include <fmt/core.h>

#include "dist/group.h"
#include "dist/launch.h"
#include "dist/reduce.h"
#include "dist/transport.h"
#include "hone/distributed.h"
#include "hone/read_file.h"
#include "hone/sha256.h"
#include "hone/temp_paths.h"

namespace hone {

namespace fs = std::filesystem;

struct DistributedRun::State {
  dist::Launch launch;
  std::unique_ptr<dist::Group> group;
};

DistributedRun::DistributedRun(std::unique_ptr<State> state) : state_(std::move(state)) {}
DistributedRun::~DistributedRun() = default;

std::string distributed_tuning_status() {
  const std::string why = dist::mpi_unavailable_reason();
  if (!why.empty()) return "distributed tuning (mpirun): unavailable: " + why;
  return "distributed tuning (mpirun): " + dist::mpi_library();
}

std::string decision_hash(const Decision& decision) {
  return dist::decision_hash(decision);
}

Result<std::unique_ptr<DistributedRun>> DistributedRun::open(const DistributedOptions& o) {
  auto state = std::make_unique<State>();
  HONE_TRY(state->launch, dist::detect_launch());
  if (state->launch.by_mpirun) {
    if (const std::string why = dist::mpi_unavailable_reason(); !why.empty())
      return fail(ErrorCode::kUnsupported,
                  fmt::format("started by an MPI launcher ({}), but distributed tuning is "
                              "unavailable: {}; each rank would tune alone",
                              state->launch.evidence, why));
    dist::use_rank_resources(state->launch);
    HONE_TRY(auto transport, dist::open_mpi());
    if (transport->rank() != state->launch.rank)
      return fail(ErrorCode::kInternal,
                  fmt::format("MPI says rank {}, the launcher said rank {} ({})", transport->rank(),
                              state->launch.rank, state->launch.evidence));
    state->group = std::make_unique<dist::Group>(
        std::move(transport),
        dist::GroupOptions{.split_candidates = o.split_candidates, .timeout_s = o.timeout_s});
  }
  return std::unique_ptr<DistributedRun>(new DistributedRun(std::move(state)));
}

TuneGroup* DistributedRun::group() {
  return state_->group.get();
}
int DistributedRun::rank() const {
  return state_->launch.rank;
}
int DistributedRun::size() const {
  return state_->group ? state_->group->size() : 1;
}
bool DistributedRun::alone() const {
  return state_->group == nullptr;
}

std::string DistributedRun::tag() const {
  return alone() ? "" : fmt::format("rank {} of {}: ", rank(), size());
}

fs::path DistributedRun::cache_path(const std::string& given) const {
  if (given.empty() || alone()) return given;
  return dist::per_rank_path(given, rank());
}

Error DistributedRun::fail_everywhere(const Error& error) {
  return alone() ? error : state_->group->fail_everywhere(error);
}

Result<std::vector<std::string>> DistributedRun::exchange(std::string_view step,
                                                          const Result<std::string>& mine) {
  if (alone()) {
    if (!mine) return fail(mine.error());
    return std::vector<std::string>{*mine};
  }
  return state_->group->exchange(step, mine);
}

Result<void> DistributedRun::agree_model(const Graph& graph) {
  if (alone()) return {};
  HONE_TRY(auto all, exchange("model", graph_hash(graph)));
  for (size_t r = 1; r < all.size(); ++r)
    if (all[r] != all[0])
      return fail(ErrorCode::kInvalidArgument,
                  fmt::format("rank {} was given a different model than rank 0 (graph sha256 {} "
                              "vs {}): every rank must tune the same one",
                              r, all[r].substr(0, 16), all[0].substr(0, 16)));
  return {};
}

Result<std::string> DistributedRun::save_agreed(const TunedModel& model, const fs::path& file,
                                                const SaveOptions& options) {
  if (alone()) {
    HONE_CHECK_OK(hone::save(model, file, options));
    return std::string();
  }
  // Rank 0 writes the package; the others write the same bytes to a
  // temporary of their own (never the same file) only to hash them.
  Result<std::string> mine = [&]() -> Result<std::string> {
    fs::path where = file;
    std::unique_ptr<TempPathGuard> guard;
    if (rank() != 0) {
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
    if (all[r] != all[0])
      // Every rank compares the same sums: each fails alike, without telling.
      return fail(ErrorCode::kInternal,
                  fmt::format("rank {}'s package bytes differ from rank 0's (sha256 {} vs {})", r,
                              all[r].substr(0, 16), all[0].substr(0, 16)));
  return all[0];
}

}  // namespace hone
