// TuneReport and CandidateResult as JSON (the report file, the tuning cache
// and package manifests use these).
#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>

#include "hone/tune_report.h"
#include "tune/report_json.h"
#include "tune/session.h"

namespace hone {

using nlohmann::json;

namespace tune_internal {

json figures_json(const LatencyFigures& f) {
  return {{"batch", f.batch},
          {"p50_ms", f.p50_ms},
          {"p90_ms", f.p90_ms},
          {"p99_ms", f.p99_ms},
          {"mean_ms", f.mean_ms},
          {"min_ms", f.min_ms},
          {"max_ms", f.max_ms},
          {"throughput", f.throughput},
          {"runs", f.runs},
          // Too few runs for a spread (a hopeless candidate's one figure): null.
          {"cv", std::isfinite(f.cv) ? json(f.cv) : json(nullptr)},
          {"converged", f.converged},
          {"dominated", f.dominated},
          {"out_of_time", f.out_of_time}};
}

LatencyFigures figures_from(const json& j) {
  LatencyFigures f;
  f.batch = j.at("batch").get<int64_t>();
  f.p50_ms = j.at("p50_ms").get<double>();
  f.p90_ms = j.at("p90_ms").get<double>();
  f.p99_ms = j.at("p99_ms").get<double>();
  f.mean_ms = j.value("mean_ms", 0.0);
  f.min_ms = j.value("min_ms", 0.0);
  f.max_ms = j.value("max_ms", 0.0);
  f.throughput = j.at("throughput").get<double>();
  f.runs = j.value("runs", 0);
  const auto cv = j.find("cv");
  f.cv = cv == j.end() ? 0.0 : cv->is_number() ? cv->get<double>() : INFINITY;
  f.converged = j.value("converged", false);
  f.dominated = j.value("dominated", false);
  f.out_of_time = j.value("out_of_time", false);
  return f;
}

namespace {

json error_json(const std::optional<Error>& e) {
  if (!e) return nullptr;
  return {{"code", std::string(to_string(e->code()))},
          {"message", e->message()},
          {"text", e->to_string()}};
}

std::optional<Error> error_from(const json& j) {
  if (j.is_null()) return std::nullopt;
  // The text keeps the whole context chain; the code comes back by its name.
  ErrorCode code = ErrorCode::kInternal;
  const std::string name = j.value("code", "");
  for (ErrorCode c :
       {ErrorCode::kInvalidArgument, ErrorCode::kUnsupported, ErrorCode::kUnsupportedHardware,
        ErrorCode::kNotFound, ErrorCode::kCorrupt, ErrorCode::kOutOfMemory,
        ErrorCode::kFailedPrecondition, ErrorCode::kIo, ErrorCode::kInternal})
    if (to_string(c) == name) code = c;
  // The text starts with the code's name, which Error::to_string adds again.
  std::string text = j.value("text", j.value("message", std::string("error")));
  if (const std::string prefix = std::string(to_string(code)) + ": "; text.starts_with(prefix))
    text.erase(0, prefix.size());
  return Error(code, std::move(text));
}

/// JSON has no infinity: a non-finite error is written as null and read back as +inf.
json number(double v) {
  return std::isfinite(v) ? json(v) : json(nullptr);
}

double number_from(const json& j, const char* key) {
  if (!j.contains(key)) return 0.0;
  const json& v = j.at(key);
  return v.is_null() ? std::numeric_limits<double>::infinity() : v.get<double>();
}

json output_check_json(const OutputCheck& o) {
  return {{"output", o.output},
          {"exact", o.exact},
          {"passed", o.passed},
          {"rel_l2", number(o.rel_l2)},
          {"max_err", number(o.max_err)},
          {"ref_rel_l2", number(o.ref_rel_l2)},
          {"ref_max_err", number(o.ref_max_err)},
          {"bound_rel_l2", number(o.bound_rel_l2)},
          {"bound_max_err", number(o.bound_max_err)},
          {"mismatches", o.mismatches},
          {"tied_flips", o.tied_flips}};
}

OutputCheck output_check_from(const json& j) {
  OutputCheck o;
  o.output = j.value("output", "");
  o.exact = j.value("exact", false);
  o.passed = j.value("passed", true);
  o.rel_l2 = number_from(j, "rel_l2");
  o.max_err = number_from(j, "max_err");
  o.ref_rel_l2 = number_from(j, "ref_rel_l2");
  o.ref_max_err = number_from(j, "ref_max_err");
  o.bound_rel_l2 = number_from(j, "bound_rel_l2");
  o.bound_max_err = number_from(j, "bound_max_err");
  o.mismatches = j.value("mismatches", int64_t{0});
  o.tied_flips = j.value("tied_flips", int64_t{0});
  return o;
}

json correctness_json(const CorrectnessResult& c) {
  json outs = json::array();
  for (const auto& o : c.outputs) outs.push_back(output_check_json(o));
  return {{"passed", c.passed},
          {"output", c.output},
          {"worst_index", c.worst_index},
          {"actual", number(c.actual)},
          {"expected", number(c.expected)},
          {"abs_error", number(c.abs_error)},
          {"rel_error", number(c.rel_error)},
          {"message", c.message},
          {"outputs", outs},
          {"truth", c.truth},
          {"tolerance", c.tolerance}};
}

CorrectnessResult correctness_from(const json& j) {
  CorrectnessResult c;
  c.passed = j.at("passed").get<bool>();
  c.output = j.value("output", "");
  c.worst_index = j.value("worst_index", int64_t{-1});
  c.actual = number_from(j, "actual");
  c.expected = number_from(j, "expected");
  c.abs_error = number_from(j, "abs_error");
  c.rel_error = number_from(j, "rel_error");
  c.message = j.value("message", "");
  for (const auto& o : j.value("outputs", json::array())) c.outputs.push_back(output_check_from(o));
  c.truth = j.value("truth", "");
  c.tolerance = j.value("tolerance", "");
  return c;
}

}  // namespace

json candidate_json(const CandidateResult& c) {
  json figs = json::array();
  for (const auto& f : c.figures) figs.push_back(figures_json(f));
  return {{"backend", c.backend},
          {"precision", c.precision},
          {"fp32_nodes", c.fp32_nodes},
          {"config_key", c.config_key},
          {"config", c.config},
          {"built", c.built},
          {"build_ms", c.build_ms},
          {"partition", c.partition},
          {"kernel_plan", c.kernel_plan},
          {"error", error_json(c.error)},
          {"checked", c.checked},
          {"correctness", correctness_json(c.correctness)},
          {"figures", figs},
          {"from_cache", c.from_cache},
          {"skipped", c.skipped},
          {"lost_because", c.lost_because}};
}

CandidateResult candidate_from(const json& j) {
  CandidateResult c;
  c.backend = j.at("backend").get<std::string>();
  c.precision = j.value("precision", "");
  c.fp32_nodes = j.value("fp32_nodes", std::vector<std::string>{});
  c.config_key = j.value("config_key", "");
  c.config = j.value("config", "");
  c.built = j.value("built", false);
  c.build_ms = j.value("build_ms", 0.0);
  c.partition = j.value("partition", "");
  c.kernel_plan = j.value("kernel_plan", std::vector<std::string>{});
  c.error = error_from(j.value("error", json(nullptr)));
  c.checked = j.value("checked", false);
  if (j.contains("correctness")) c.correctness = correctness_from(j.at("correctness"));
  for (const auto& f : j.value("figures", json::array())) c.figures.push_back(figures_from(f));
  c.from_cache = j.value("from_cache", false);
  c.skipped = j.value("skipped", "");
  c.lost_because = j.value("lost_because", "");
  return c;
}

std::string candidate_to_json(const CandidateResult& c) {
  return candidate_json(c).dump();
}

Result<CandidateResult> candidate_from_json(std::string_view text) {
  try {
    return candidate_from(json::parse(text));
  } catch (const json::exception& e) {
    return fail(ErrorCode::kCorrupt, std::string("candidate record is not valid: ") + e.what());
  }
}

json decision_json(const Decision& d) {
  json fields = json::object();
  for (const auto& [k, v] : d.config_fields) fields[k] = v;
  json figs = json::array();
  for (const auto& f : d.figures) figs.push_back(figures_json(f));
  return {{"backend", d.backend},
          {"candidate", d.chosen()},
          {"config_key", d.config_key},
          {"config_fields", fields},
          {"config", d.config},
          {"kernel_plan", d.kernel_plan},
          {"figures", figs},
          {"reason", d.reason},
          {"losers", d.losers},
          {"baseline_kept", d.baseline_kept}};
}

Decision decision_from(const json& j) {
  Decision d;
  d.backend = j.at("backend").get<std::string>();
  d.candidate = j.value("candidate", "");
  d.config_key = j.value("config_key", "");
  const json fields = j.value("config_fields", json::object());
  for (const auto& [k, v] : fields.items()) d.config_fields.emplace_back(k, v.get<std::string>());
  d.config = j.value("config", "");
  d.kernel_plan = j.value("kernel_plan", std::vector<std::string>{});
  for (const auto& f : j.value("figures", json::array())) d.figures.push_back(figures_from(f));
  d.reason = j.value("reason", "");
  d.losers = j.value("losers", std::map<std::string, std::string>{});
  d.baseline_kept = j.value("baseline_kept", false);
  return d;
}

}  // namespace tune_internal

using namespace tune_internal;

std::string CandidateResult::json() const {
  return candidate_json(*this).dump();
}

Result<CandidateResult> CandidateResult::from_json(std::string_view text) {
  return candidate_from_json(text);
}

std::string TuneReport::json() const {
  nlohmann::json cands = nlohmann::json::array();
  for (const auto& c : candidates) cands.push_back(candidate_json(c));
  nlohmann::json searches = nlohmann::json::array();
  for (const auto& s : batch_searches) {
    nlohmann::json pts = nlohmann::json::array();
    for (const auto& p : s.points) pts.push_back(figures_json(p));
    searches.push_back({{"backend", s.backend},
                        {"points", pts},
                        {"best_batch", s.best_batch},
                        {"stopped_because", s.stopped_because}});
  }
  nlohmann::json j = {
      {"model", model},
      {"graph_hash", graph_hash},
      {"strategy", strategy},
      {"spec", spec},
      {"measured_inputs", measured_inputs},
      {"threads", threads},
      {"batch_sizes", batch_sizes},
      {"baseline_gate_percent", baseline_gate_percent},
      {"time_budget_s", time_budget_s},
      {"optimized", optimized},
      {"baseline", candidate_json(baseline)},
      {"candidates", cands},
      {"batch_searches", searches},
      {"decision", decision_json(decision)},
      {"total_ms", total_ms},
      {"cache", {{"used", cache_used}, {"hits", cache_hits}, {"misses", cache_misses}}}};
  return j.dump(2);
}

Result<TuneReport> TuneReport::from_json(std::string_view text) {
  try {
    const auto j = nlohmann::json::parse(text);
    TuneReport r;
    r.model = j.at("model").get<std::string>();
    r.graph_hash = j.value("graph_hash", "");
    r.strategy = j.value("strategy", "");
    r.spec = j.value("spec", "");
    r.measured_inputs = j.value("measured_inputs", std::vector<std::string>{});
    r.threads = j.value("threads", 0);
    r.batch_sizes = j.value("batch_sizes", std::vector<int64_t>{});
    r.baseline_gate_percent = j.value("baseline_gate_percent", 1.0);
    r.time_budget_s = j.value("time_budget_s", 0.0);
    r.optimized = j.value("optimized", "");
    r.baseline = candidate_from(j.at("baseline"));
    for (const auto& c : j.at("candidates")) r.candidates.push_back(candidate_from(c));
    for (const auto& s : j.value("batch_searches", nlohmann::json::array())) {
      BatchSearchResult b;
      b.backend = s.at("backend").get<std::string>();
      for (const auto& p : s.at("points")) b.points.push_back(figures_from(p));
      b.best_batch = s.value("best_batch", int64_t{0});
      b.stopped_because = s.value("stopped_because", "");
      r.batch_searches.push_back(std::move(b));
    }
    r.decision = decision_from(j.at("decision"));
    r.total_ms = j.value("total_ms", 0.0);
    if (j.contains("cache")) {
      r.cache_used = j["cache"].value("used", false);
      r.cache_hits = j["cache"].value("hits", 0);
      r.cache_misses = j["cache"].value("misses", 0);
    }
    return r;
  } catch (const nlohmann::json::exception& e) {
    return fail(ErrorCode::kCorrupt, std::string("tuning report is not valid: ") + e.what());
  }
}

}  // namespace hone
