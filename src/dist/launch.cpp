#include "dist/launch.h"

#include <charconv>
#include <cstdlib>

#include <fmt/core.h>

#include "tune/cache.h"

namespace hone::dist {
namespace {

extern "C" char** environ;

Result<int> number(const std::map<std::string, std::string>& env, const char* name, int fallback) {
  auto it = env.find(name);
  if (it == env.end() || it->second.empty()) return fallback;
  int v = 0;
  const char* b = it->second.data();
  const char* e = b + it->second.size();
  auto [p, ec] = std::from_chars(b, e, v);
  if (ec != std::errc() || p != e || v < 0)
    return fail(
        ErrorCode::kInvalidArgument,
        fmt::format("{}='{}' is not a rank number (set by an MPI launcher?)", name, it->second));
  return v;
}

}  // namespace

Result<Launch> detect_launch(const std::map<std::string, std::string>& env) {
  Launch l;
  struct Scheme {
    const char *size, *rank, *local;
  };
  for (const Scheme& s :
       {Scheme{"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK"},
        Scheme{"PMIX_SIZE", "PMIX_RANK", "PMIX_LOCAL_RANK"},
        Scheme{"PMI_SIZE", "PMI_RANK", "MPI_LOCALRANKID"}}) {
    if (!env.contains(s.rank) && !env.contains(s.size)) continue;
    l.by_mpirun = true;
    HONE_TRY(l.size, number(env, s.size, 1));
    HONE_TRY(l.rank, number(env, s.rank, 0));
    HONE_TRY(l.local_rank, number(env, s.local, l.rank));
    l.evidence = fmt::format("{}={}", env.contains(s.size) ? s.size : s.rank,
                             env.at(env.contains(s.size) ? s.size : s.rank));
    if (l.size < 1 || l.rank >= l.size)
      return fail(
          ErrorCode::kInvalidArgument,
          fmt::format("rank {} of {} ({}): not a rank of the job", l.rank, l.size, l.evidence));
    break;
  }
  return l;
}

Result<Launch> detect_launch() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string kv(*e);
    if (auto eq = kv.find('='); eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return detect_launch(env);
}

std::string cuda_device_for(const Launch& launch, const char* already_set) {
  if (already_set != nullptr && *already_set != '\0') return already_set;
  return std::to_string(launch.local_rank);
}

std::filesystem::path per_rank_path(const std::filesystem::path& path, int rank) {
  std::filesystem::path out = path;
  out.replace_filename(
      fmt::format("{}.rank{}{}", path.stem().string(), rank, path.extension().string()));
  return out;
}

void use_rank_resources(const Launch& launch) {
  // TuningCache::default_path() honours HONE_CACHE_DIR, XDG_CACHE_HOME and
  // HOME; its folder is the cache folder aot shares.
  const std::filesystem::path base = TuningCache::default_path().parent_path();
  const std::string mine = (base / fmt::format("rank{}", launch.rank)).string();
  ::setenv("HONE_CACHE_DIR", mine.c_str(), 1);
  const std::string device = cuda_device_for(launch, std::getenv("HONE_CUDA_DEVICE"));
  ::setenv("HONE_CUDA_DEVICE", device.c_str(), 1);
}

}  // namespace hone::dist
