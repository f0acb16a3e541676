#include "dist/reduce.h"

#include <algorithm>

#include <fmt/core.h>

#include "hone/sha256.h"
#include "tune/report_json.h"

namespace hone::dist {
namespace {

std::string on_rank(size_t rank, const std::string& what) {
  return fmt::format("rank {}: {}", rank, what);
}

}  // namespace

CandidateResult reduce_candidate(const std::vector<CandidateResult>& per_rank) {
  CandidateResult out = per_rank.at(0);
  if (per_rank.size() == 1) return out;
  for (size_t r = 0; r < per_rank.size(); ++r) {
    const CandidateResult& c = per_rank[r];
    out.built = out.built && c.built;
    out.checked = out.checked && c.checked;
    out.from_cache = out.from_cache && c.from_cache;
    out.build_ms = std::max(out.build_ms, c.build_ms);
  }
  // The first rank that skipped, failed or was wrong speaks for the group.
  out.skipped.clear();
  for (size_t r = 0; r < per_rank.size() && out.skipped.empty(); ++r)
    if (!per_rank[r].skipped.empty()) out.skipped = on_rank(r, per_rank[r].skipped);
  out.error.reset();
  for (size_t r = 0; r < per_rank.size() && !out.error; ++r)
    if (const auto& e = per_rank[r].error) {
      Error tagged(e->code(), on_rank(r, e->message()));
      for (const auto& c : e->context()) tagged.add_context(c);
      out.error = std::move(tagged);
    }
  const auto failing = std::find_if(per_rank.begin(), per_rank.end(), [](const CandidateResult& c) {
    return c.checked && !c.correctness.passed;
  });
  if (failing != per_rank.end()) {
    out.correctness = failing->correctness;
    out.correctness.message =
        on_rank(static_cast<size_t>(failing - per_rank.begin()), out.correctness.message);
  } else {
    for (size_t r = 1; r < per_rank.size(); ++r)
      if (per_rank[r].checked) out.correctness = worse_of(out.correctness, per_rank[r].correctness);
  }
  // Figures at the batch sizes every rank measured.
  std::vector<LatencyFigures> figures;
  for (const LatencyFigures& f0 : per_rank[0].figures) {
    LatencyFigures f = f0;
    bool everywhere = true;
    for (size_t r = 1; r < per_rank.size() && everywhere; ++r) {
      const LatencyFigures* g = per_rank[r].at_batch(f0.batch);
      if (g == nullptr) {
        everywhere = false;
        break;
      }
      f.p50_ms = std::max(f.p50_ms, g->p50_ms);
      f.p90_ms = std::max(f.p90_ms, g->p90_ms);
      f.p99_ms = std::max(f.p99_ms, g->p99_ms);
      f.mean_ms = std::max(f.mean_ms, g->mean_ms);
      f.min_ms = std::max(f.min_ms, g->min_ms);
      f.max_ms = std::max(f.max_ms, g->max_ms);
      f.throughput = std::min(f.throughput, g->throughput);
      f.runs = std::min(f.runs, g->runs);
      f.cv = std::max(f.cv, g->cv);
      f.converged = f.converged && g->converged;
      f.dominated = f.dominated || g->dominated;
      f.out_of_time = f.out_of_time || g->out_of_time;
    }
    if (everywhere) figures.push_back(f);
  }
  out.figures = std::move(figures);
  return out;
}

std::string decision_hash(const Decision& decision) {
  // nlohmann::json keeps object keys sorted: the same decision, the same text.
  return sha256_hex(tune_internal::decision_json(decision).dump());
}

}  // namespace hone::dist
