// `hone tune MODEL.onnx -o OUT.hone`: hone's main job. Tries the backends a
// strategy offers, checks each against the reference, measures it, picks
// one and saves the pick as a .hone package; prints the comparison table and
// can write the report as JSON and as an HTML page with plots.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "cli_common.h"
#include "hone/onnx.h"
#include "hone/package.h"
#include "hone/tune.h"

namespace hone::cli {
namespace {

namespace fs = std::filesystem;

struct TuneCliOptions {
  std::string model;
  std::string output;
  std::vector<std::string> backends;
  std::string strategy = "max-throughput";
  std::vector<int64_t> batch_sizes;
  std::string samples_dir;
  std::vector<std::string> dims;
  std::vector<std::string> configs;
  std::string report_json;
  std::string report_html;
  bool dry_run = false;
  bool no_cache = false;
  std::string cache;
  double gate = 1.0;
  uint64_t seed = 1;
  int64_t max_batch = 256;
  std::string tolerance;
  double time_budget = 0;
  double candidate_budget = 3.0;
};

/// A progress line per candidate and step: redrawn in place on a terminal,
/// one plain line per step otherwise (logs, CI).
class Progress {
 public:
  Progress() : tty_(isatty(STDERR_FILENO) == 1) {}
  ~Progress() { finish(); }
  void operator()(const TuneEvent& e) {
    const std::string eta = e.eta_s < 0 ? "" : fmt::format(" (about {:.0f} s left)", e.eta_s);
    if (!tty_) {
      fmt::print(stderr, "tune: [{}/{}] {}: {}{}\n", e.candidate_index + 1, e.candidate_count,
                 e.candidate, e.step, eta);
      return;
    }
    constexpr int kWidth = 24;
    const int filled = static_cast<int>(e.fraction * kWidth + 0.5);
    fmt::print(stderr, "\r\033[K[{}/{}] {:<10} [{}{}] {}{}", e.candidate_index + 1,
               e.candidate_count, e.candidate, std::string(static_cast<size_t>(filled), '#'),
               std::string(static_cast<size_t>(kWidth - filled), '.'), e.step, eta);
    open_ = true;
    if (e.step == "done" || e.step == "failed" || e.step == "cached" ||
        e.step.starts_with("skipped")) {
      fmt::print(stderr, "\n");
      open_ = false;
    }
  }
  void finish() {
    if (open_) fmt::print(stderr, "\n");
    open_ = false;
  }

 private:
  bool tty_;
  bool open_ = false;
};

/// The graph's batch dim name: the symbolic leading dim of its first input that has one.
std::string leading_symbol(const Graph& g) {
  for (ValueId id : g.inputs()) {
    const Value& v = g.value(id);
    if (v.shape && v.shape->rank() > 0 && v.shape->dims()[0].is_symbolic())
      return v.shape->dims()[0].symbol_name();
  }
  return "";
}

/// Random samples when no --samples: one per batch size (so the batch axis can
/// be learned), other symbolic dims at their declared opt, else 1.
Result<std::vector<Sample>> random_samples(const Graph& g, const std::vector<DimDeclaration>& decls,
                                           std::vector<int64_t>& batch_sizes, uint64_t seed) {
  std::map<std::string, int64_t> dims;
  for (const auto& d : decls)
    dims[d.name] = d.kind == DimSpec::Kind::kStatic ? d.size : d.bounds.opt;
  const std::string batch = leading_symbol(g);
  if (batch_sizes.empty() && !batch.empty()) {
    batch_sizes = {1, 8};
    for (const auto& d : decls)
      if (d.name == batch && d.kind != DimSpec::Kind::kStatic)
        batch_sizes = {d.bounds.min, d.bounds.max};
  }
  std::vector<int64_t> sizes = batch.empty() ? std::vector<int64_t>{1} : batch_sizes;
  std::vector<Sample> samples;
  std::mt19937_64 rng(seed);
  for (int64_t b : sizes) {
    if (!batch.empty()) dims[batch] = b;
    SampleMap m;
    for (ValueId id : g.inputs()) {
      HONE_TRY(Tensor t, random_input(g.value(id), dims, rng));
      m.emplace(g.value(id).name, std::move(t));
    }
    samples.emplace_back(std::move(m));
  }
  return samples;
}

int run_tune(TuneCliOptions& o) {
  if (o.output.empty() && !o.dry_run)
    return usage_error("give the package to write with -o OUT.hone (or --dry-run)");
  TuneOptions opts;
  for (const std::string& d : o.dims) {
    auto decl = parse_dim_declaration(d);
    if (!decl) return usage_error("--dim " + d + ": " + decl.error().message());
    opts.dims.push_back(*decl);
  }
  for (const std::string& c : o.configs) {
    const auto dot = c.find('.'), eq = c.find('=');
    if (dot == std::string::npos || eq == std::string::npos || dot > eq)
      return usage_error("--config " + c + ": expected BACKEND.FIELD=VALUE");
    opts.configs[c.substr(0, dot)][c.substr(dot + 1, eq - dot - 1)] = c.substr(eq + 1);
  }
  auto strategy = parse_strategy(o.strategy, o.backends);
  if (!strategy) return usage_error("--strategy: " + strategy.error().message());
  auto graph = hone::onnx::load_model(o.model);
  if (!graph) return report(graph.error());

  std::vector<int64_t> batch_sizes = o.batch_sizes;
  Result<std::vector<Sample>> samples = o.samples_dir.empty()
                                            ? random_samples(*graph, opts.dims, batch_sizes, o.seed)
                                            : load_samples(o.samples_dir, *graph);
  if (!samples) return report(samples.error());
  opts.batch_sizes = batch_sizes;
  apply_requested_threads();
  opts.threads = requested_threads() < 0 ? 0 : requested_threads();
  opts.baseline_gate_percent = o.gate;
  opts.use_cache = !o.no_cache;
  opts.cache_path = o.cache;
  opts.seed = o.seed;
  opts.batch_search.max_batch = o.max_batch;
  if (!o.tolerance.empty()) {
    auto tol = GateTolerance::parse(o.tolerance);
    if (!tol) return usage_error("--tolerance: " + tol.error().message());
    opts.tolerance = *tol;
  }
  if (!(o.time_budget >= 0) || !(o.candidate_budget > 0))
    return usage_error("--time-budget must be >= 0 and --candidate-budget > 0 seconds");
  opts.time_budget_s = o.time_budget;
  opts.candidate_budget_s = o.candidate_budget;

  if (o.dry_run) {
    auto lines = hone::dry_run(*graph, *samples, **strategy, opts);
    if (!lines) return report(lines.error());
    for (const auto& l : *lines) fmt::print("{}\n", l);
    fmt::print("dry run: nothing was built or measured\n");
    return kExitOk;
  }
  auto progress = std::make_shared<Progress>();
  opts.progress = [progress](const TuneEvent& e) { (*progress)(e); };
  auto tuned = hone::tune(*graph, *samples, **strategy, opts);
  progress->finish();
  if (!tuned) return report(tuned.error().add_context("while tuning '" + o.model + "'"));
  const TuneReport& r = tuned->report();
  fmt::print("{}", r.table());
  if (!o.report_json.empty())
    if (auto w = write_file_atomic(o.report_json, r.json() + "\n"); !w) return report(w.error());
  if (!o.report_html.empty())
    if (auto w = write_file_atomic(o.report_html, r.html()); !w) return report(w.error());
  if (auto s = hone::save(*tuned, o.output); !s) return report(s.error());
  std::error_code ec;
  fmt::print("saved {} ({} bytes; {} backend, tuned in {:.1f} s{})\n", o.output,
             fs::file_size(o.output, ec), r.decision.backend, r.total_ms / 1000.0,
             r.cache_used
                 ? fmt::format(", tuning cache {} hits / {} misses", r.cache_hits, r.cache_misses)
                 : "");
  return kExitOk;
}

}  // namespace

void add_tune_command(CLI::App& root, std::vector<Command>& commands) {
  auto o = std::make_shared<TuneCliOptions>();
  CLI::App* sub = root.add_subcommand(
      "tune",
      "try backends, check each against the reference, measure, choose, save a .hone package");
  sub->add_option("model", o->model, "the .onnx file")->required()->type_name("MODEL.onnx");
  sub->add_option("-o,--output", o->output, "the package to write")->type_name("OUT.hone");
  sub->add_option("--backends", o->backends, "candidates, comma-separated (default: every backend)")
      ->delimiter(',')
      ->type_name("A,B");
  sub->add_option("--strategy", o->strategy,
                  "first-wins, one-backend, max-throughput, max-throughput+search, min-latency, "
                  "latency-budget:MS")
      ->capture_default_str();
  sub->add_option("--batch-sizes", o->batch_sizes,
                  "batch sizes to measure (default: the batch bounds)")
      ->delimiter(',')
      ->type_name("1,8");
  sub->add_option("--samples", o->samples_dir,
                  "sample folders with input_<i>.pb/.npy (default: random)")
      ->type_name("DIR");
  sub->add_option("--dim", o->dims,
                  "declare a dim: NAME=MIN:OPT:MAX (dynamic) or NAME=V (static); repeatable")
      ->type_name("NAME=MIN:OPT:MAX");
  sub->add_option("--config", o->configs, "a backend's config field (repeatable)")
      ->type_name("BACKEND.FIELD=VALUE");
  sub->add_option("--report", o->report_json, "write the tuning report as JSON")
      ->type_name("FILE.json");
  sub->add_option("--html", o->report_html, "write the tuning report as an HTML page with plots")
      ->type_name("FILE.html");
  sub->add_flag("--dry-run", o->dry_run, "say what would be built and measured; build nothing");
  sub->add_flag("--no-cache", o->no_cache,
                "measure everything, neither reading nor writing the tuning cache");
  sub->add_option("--cache", o->cache,
                  "the tuning cache database (default ~/.cache/hone/tuning.db)")
      ->type_name("FILE");
  sub->add_option("--gate", o->gate, "percent a choice must beat the reference by")
      ->capture_default_str();
  sub->add_option("--seed", o->seed, "seed of random samples and check inputs")
      ->capture_default_str();
  sub->add_option("--max-batch", o->max_batch, "largest batch the batch-size search tries")
      ->capture_default_str();
  sub->add_option("--tolerance", o->tolerance,
                  "correctness gate for every candidate: an output's error vs the f64 truth may "
                  "be FACTOR x the f32 reference's, or the floors (default per precision; f32: "
                  "100:1e-5:1e-4)")
      ->type_name("FACTOR[:FLOOR_REL_L2[:FLOOR_MAX]]");
  sub->add_option("--time-budget", o->time_budget,
                  "seconds for the whole tune; candidates not reached are skipped (0: no limit)")
      ->capture_default_str()
      ->type_name("SECONDS");
  sub->add_option("--candidate-budget", o->candidate_budget,
                  "seconds of profiling per candidate, shared by its batch sizes")
      ->capture_default_str()
      ->type_name("SECONDS");
  commands.push_back({sub, [o] { return run_tune(*o); }});
}

}  // namespace hone::cli
