#include "dist/group.h"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "dist/envelope.h"
#include "dist/reduce.h"
#include "tune/report_json.h"

namespace hone::dist {

using nlohmann::json;

Group::Group(std::unique_ptr<Transport> transport, GroupOptions options)
    : transport_(std::move(transport)), options_(options) {}

Result<std::vector<std::string>> Group::exchange(std::string_view step,
                                                 const Result<std::string>& mine) {
  if (failure_) return fail(*failure_);
  auto gathered = transport_->all_gather(seal(step, mine), options_.timeout_s);
  if (!gathered) {
    failure_ = std::move(gathered).error().add_context(fmt::format("at step '{}'", step));
    return fail(*failure_);
  }
  auto opened = open_all(step, *gathered);
  if (!opened) failure_ = opened.error();
  return opened;
}

Error Group::fail_everywhere(const Error& error) {
  if (failure_) return *failure_;
  auto r = exchange("failed", Result<std::string>(std::unexpected(error)));
  // exchange() cannot succeed with this rank's error in it.
  return failure_ ? *failure_ : error;
}

std::unexpected<Error> Group::all_fail(Error error) {
  // Every rank read the same messages, so every rank fails alike here,
  // without telling the others.
  failure_ = std::move(error);
  return fail(*failure_);
}

Result<void> Group::agree_candidate(CandidateResult& r) {
  HONE_TRY(auto all, exchange("candidate " + r.backend, r.json()));
  // Every rank reduces the same parsed results (its own too), so every rank
  // gets the same bytes back.
  std::vector<CandidateResult> per_rank;
  for (size_t i = 0; i < all.size(); ++i) {
    auto c = CandidateResult::from_json(all[i]);
    if (!c) return all_fail(Error(c.error()).add_context(fmt::format("from rank {}", i)));
    per_rank.push_back(std::move(*c));
  }
  r = reduce_candidate(per_rank);
  return {};
}

Result<void> Group::agree_batch_search(BatchSearchResult& s) {
  json pts = json::array();
  for (const auto& p : s.points) pts.push_back(tune_internal::figures_json(p));
  const json mine = {{"backend", s.backend},
                     {"points", pts},
                     {"best_batch", s.best_batch},
                     {"stopped_because", s.stopped_because}};
  HONE_TRY(auto all, exchange("batch search " + s.backend, mine.dump()));
  // Rank 0 decides the batch sizes.
  const json j = json::parse(all.at(0), nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return all_fail(Error(ErrorCode::kCorrupt, "rank 0 sent an unreadable batch search"));
  try {
    BatchSearchResult out;
    out.backend = j.at("backend").get<std::string>();
    for (const auto& p : j.at("points")) out.points.push_back(tune_internal::figures_from(p));
    out.best_batch = j.at("best_batch").get<int64_t>();
    out.stopped_because = j.at("stopped_because").get<std::string>();
    s = std::move(out);
  } catch (const json::exception& e) {
    return all_fail(Error(ErrorCode::kCorrupt,
                          std::string("rank 0 sent an unreadable batch search: ") + e.what()));
  }
  return {};
}

Result<std::vector<CandidateResult>> Group::share_candidates(
    const std::vector<CandidateResult>& mine) {
  json arr = json::array();
  for (const auto& c : mine) arr.push_back(json::parse(c.json()));
  HONE_TRY(auto all, exchange("share candidates", arr.dump()));
  std::vector<CandidateResult> out;
  for (size_t r = 0; r < all.size(); ++r) {
    const json j = json::parse(all[r], nullptr, false);
    if (j.is_discarded() || !j.is_array())
      return all_fail(Error(ErrorCode::kCorrupt,
                            fmt::format("rank {} sent an unreadable share of candidates", r)));
    for (const auto& c : j) {
      auto parsed = CandidateResult::from_json(c.dump());
      if (!parsed)
        return all_fail(Error(parsed.error()).add_context(fmt::format("from rank {}", r)));
      out.push_back(std::move(*parsed));
    }
  }
  return out;
}

Result<void> Group::agree_report(TuneReport& r) {
  // The kernel plan is left out of what must agree: a backend may time
  // alternatives while it plans a shape (onednn's conv layouts and residual
  // fusions), so two ranks can build one decision into different plans, as
  // they measure different times. Every rank then takes rank 0's report, plan
  // included, and the packages match.
  Decision agreed = r.decision;
  agreed.kernel_plan.clear();
  const json mine = {
      {"decision", decision_hash(agreed)}, {"backend", r.decision.backend}, {"report", r.json()}};
  HONE_TRY(auto all, exchange("decision", mine.dump()));
  std::vector<json> per_rank;
  for (const auto& a : all) per_rank.push_back(json::parse(a, nullptr, false));
  for (size_t i = 0; i < per_rank.size(); ++i)
    if (per_rank[i].is_discarded() || !per_rank[i].contains("decision"))
      return all_fail(
          Error(ErrorCode::kCorrupt, fmt::format("rank {} sent an unreadable decision", i)));
  const std::string h0 = per_rank[0].value("decision", "");
  for (size_t i = 1; i < per_rank.size(); ++i)
    if (per_rank[i].value("decision", "") != h0) {
      // Every rank sees the same messages, so every rank fails alike here.
      return all_fail(
          Error(ErrorCode::kInternal,
                fmt::format("the ranks disagree: rank 0 chose {} (decision {}), rank {} "
                            "chose {} (decision {})",
                            per_rank[0].value("backend", ""), h0.substr(0, 12), i,
                            per_rank[i].value("backend", ""),
                            per_rank[i].value("decision", "").substr(0, 12))));
    }
  auto report = TuneReport::from_json(per_rank[0].value("report", ""));
  if (!report) {
    return all_fail(Error(report.error()).add_context("in rank 0's report"));
  }
  r = std::move(*report);
  return {};
}

}  // namespace hone::dist
