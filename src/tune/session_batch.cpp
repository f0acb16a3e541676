// Session::search_batch: the batch-size search over one usable candidate,
// doubling the batch until memory, the latency budget or stalled throughput
// stops it.
#include <algorithm>

#include <fmt/core.h>

#include "core/log.h"
#include "tune/session.h"
#include "tune/session_detail.h"

namespace hone::tune_internal {

Result<BatchSearchResult> Session::search_batch(const std::string& name) {
  const BatchSearchOptions& o = options_.batch_search;
  BatchSearchResult res;
  res.backend = name;
  if (spec_.batch_dim.empty()) {
    res.stopped_because = "the model has no batch axis";
    searches_.push_back(res);
    return res;
  }
  const CandidateResult& r = evaluate(name);
  if (!r.usable())
    return fail(ErrorCode::kFailedPrecondition, "batch search on '" + name + "': it is not usable");
  Backend* be = nullptr;
  if (name == kReference) {
    be = built_.at(kReference).get();
  } else {
    HONE_TRY(auto b, take_built(name));
    built_[name] = std::move(b);
    be = built_[name].get();
  }
  GraphSpec wide = spec_;
  wide.bounds[spec_.batch_dim].max = std::max(wide.bounds[spec_.batch_dim].max, o.max_batch);
  ProfileOptions po = options_.profile;
  po.max_seconds = std::min(po.max_seconds, 5.0);
  double prev = 0;
  int stalls = 0;
  res.stopped_because = "reached the largest batch tried";
  for (int64_t b = std::max<int64_t>(o.start, 1); b <= o.max_batch; b *= 2) {
    emit(name, fmt::format("batch search {}", b), static_cast<int>(order_.size()), 0.5);
    auto point = guarded("batch search", [&]() -> Result<LatencyFigures> {
      HONE_TRY(Sample s, wide.rebatch(base_sample_, b));
      HONE_TRY(auto flat, wide.flatten(s));
      return profile(*be, flat, b, po);
    });
    if (!point) {
      res.stopped_because = point.error().code() == ErrorCode::kOutOfMemory
                                ? fmt::format("out of memory at batch {}", b)
                                : fmt::format("failed at batch {}: {}", b, point.error().message());
      break;
    }
    res.points.push_back(*point);
    if (o.latency_budget_ms > 0 && point->p50_ms > o.latency_budget_ms) {
      res.stopped_because =
          fmt::format("latency budget {} ms crossed at batch {}", o.latency_budget_ms, b);
      break;
    }
    if (prev > 0 && point->throughput < prev * (1 + o.min_gain)) {
      if (++stalls >= o.stalls_to_stop) {
        res.stopped_because = fmt::format("throughput grew less than {:.0f}% {} times in a row",
                                          o.min_gain * 100, stalls);
        break;
      }
    } else {
      stalls = 0;
    }
    prev = std::max(prev, point->throughput);
  }
  double best = 0;
  for (const auto& p : res.points)
    if (p.throughput > best && (o.latency_budget_ms <= 0 || p.p50_ms <= o.latency_budget_ms)) {
      best = p.throughput;
      res.best_batch = p.batch;
    }
  // Rank 0 decides the batch sizes: its search is every rank's.
  if (options_.group != nullptr) {
    HONE_CHECK_OK_CTX(options_.group->agree_batch_search(res),
                      "while agreeing on the batch-size search of '" + name + "'");
  }
  // The search's points count as the candidate's figures too.
  CandidateResult& rr = name == kReference ? results_.at(kReference) : results_.at(name);
  for (const auto& p : res.points)
    if (rr.at_batch(p.batch) == nullptr) rr.figures.push_back(p);
  std::sort(rr.figures.begin(), rr.figures.end(),
            [](const LatencyFigures& a, const LatencyFigures& b) { return a.batch < b.batch; });
  searches_.push_back(res);
  return res;
}

}  // namespace hone::tune_internal
