// Session's use of the tuning cache (cache.h): the key of a candidate's
// figures, and reading and writing them.
#include <fmt/core.h>

#include "core/log.h"
#include "tune/session.h"
#include "tune/session_detail.h"

namespace hone::tune_internal {

std::optional<CacheKey> Session::cache_key(const std::string& name,
                                           const std::string& config_key) const {
  if (!cache_) return std::nullopt;
  std::string shapes;
  for (const auto& [b, ins] : profile_inputs_)
    shapes += fmt::format("[{}] {}; ", b, shapes_text(ins));
  shapes += fmt::format("threads {}; checks {}", threads_, check_inputs_.size());
  const ProfileOptions& p = options_.profile;
  shapes += fmt::format("; profile {} {} {} {} {}", p.warmup, p.window, p.cv_target, p.min_runs,
                        p.max_runs);
  shapes += "; gate " + (options_.tolerance ? options_.tolerance->describe() : "per precision") +
            "; truth " + truth_;
  shapes += fmt::format("; budget {}", options_.candidate_budget_s);
  return CacheKey{graph_hash_, name, config_key, shapes, spec_.key() + "/" + fingerprint_key_};
}

bool Session::lookup_cache(CandidateResult& r) {
  if (!cache_) return false;
  auto probe = create_backend(r.backend);  // cheap: only its config key is needed
  if (!probe) return false;
  const auto key = cache_key(r.backend, (*probe)->config().key());
  auto hit = cache_->lookup(*key);
  if (!hit) {
    HONE_LOG_WARN("tuning cache lookup failed, measuring {}: {}", r.backend,
                  hit.error().to_string());
    ++cache_misses_;
    return false;
  }
  if (!*hit) {
    ++cache_misses_;
    return false;
  }
  auto cached = candidate_from_json(**hit);
  if (!cached) {
    HONE_LOG_WARN("tuning cache entry for {} unreadable, measuring again: {}", r.backend,
                  cached.error().to_string());
    ++cache_misses_;
    return false;
  }
  const std::string name = r.backend;
  r = std::move(*cached);
  r.backend = name;
  r.from_cache = true;
  ++cache_hits_;
  HONE_LOG_DEBUG("tune: {}: figures from the tuning cache", name);
  return true;
}

void Session::store_cache(const CandidateResult& r) {
  if (!cache_) return;
  // Keyed as lookup_cache() probes: by the config the candidate's name gives
  // (a mixed plan's fp32_nodes are part of the figures, not of the key).
  auto probe = create_backend(r.backend);
  if (!probe) return;
  const auto key = cache_key(r.backend, (*probe)->config().key());
  if (auto st = cache_->store(*key, candidate_to_json(r)); !st)
    HONE_LOG_WARN("could not store {} in the tuning cache: {}", r.backend, st.error().to_string());
}

}  // namespace hone::tune_internal
