// `hone tune MODEL.onnx -o OUT.hone`: hone's main job. Tries the backends a
// strategy offers, checks each against the reference, measures it, picks
// one and saves the pick as a .hone package; prints the comparison table,
// writes the report as an HTML page with plots next to the package (unless
// --no-html) and as JSON with --report.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "cli_common.h"
#include "dist_cli.h"
#include "hone/onnx.h"
#include "hone/package.h"
#include "hone/random_samples.h"
#include "hone/tune.h"
#include "input_options.h"

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
  std::string inputs_dir;
  InputValueOptions values;
  std::vector<std::string> dims;
  std::vector<std::string> configs;
  std::string report_json;
  std::string report_html;
  bool no_html = false;
  bool dry_run = false;
  bool no_cache = false;
  std::string cache;
  double gate = 1.0;
  uint64_t seed = 1;
  int64_t max_batch = 256;
  std::string tolerance;
  std::string precision = "fp32";
  bool no_mixed = false;
  double time_budget = 0;
  double candidate_budget = 3.0;
  DistCliOptions dist;  // under mpirun (dist_cli.h)
};

/// A progress line per candidate and step: redrawn in place on a terminal,
/// with a bar over the whole run and an estimate of the time left; one plain
/// line per step otherwise (logs, CI), where redrawing would leave garbage.
class Progress {
 public:
  /// `tag` starts each line ("rank 1 of 2: " under mpirun).
  explicit Progress(std::string tag = "")
      : tty_(isatty(STDERR_FILENO) == 1 && tag.empty()),
        tag_(std::move(tag)),
        start_(std::chrono::steady_clock::now()) {}
  ~Progress() { finish(); }
  void operator()(const TuneEvent& e) {
    const std::string eta = e.eta_s < 0 ? "" : fmt::format(" (about {:.0f} s left)", e.eta_s);
    if (!tty_) {
      fmt::print(stderr, "{}tune: [{}/{}] {}: {}{}\n", tag_, e.candidate_index + 1,
                 e.candidate_count, e.candidate, e.step, eta);
      return;
    }
    constexpr int kWidth = 24;
    // The whole run's share done: candidates before this one, plus this one's.
    const double overall =
        e.candidate_count > 0
            ? (e.candidate_index + std::clamp(e.fraction, 0.0, 1.0)) / e.candidate_count
            : 0.0;
    const int filled = static_cast<int>(overall * kWidth + 0.5);
    // The tuner's estimate (its budgets) when it gives one; else the elapsed
    // time scaled by the share done, shown once a tenth is done.
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const double left = e.eta_s >= 0  ? e.eta_s
                        : overall > 0 ? elapsed * (1 - overall) / overall
                                      : -1;
    const std::string bar_eta = left < 0 || (e.eta_s < 0 && (overall < 0.1 || overall >= 1.0)) ? ""
                                : left < 1 ? " <1 s left"
                                           : fmt::format(" ~{:.0f} s left", left);
    fmt::print(stderr, "\r\033[K[{}/{}] [{}{}]{} {}: {}", e.candidate_index + 1, e.candidate_count,
               std::string(static_cast<size_t>(filled), '#'),
               std::string(static_cast<size_t>(kWidth - filled), '.'), bar_eta, e.candidate,
               e.step);
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
  std::string tag_;
  std::chrono::steady_clock::time_point start_;
  bool open_ = false;
};

/// Random samples when no --samples, as hone::random_samples() makes them
/// (one per batch size, other symbolic dims at their declared or assumed opt),
/// with the values --shape, --fill and --range ask for.
Result<std::vector<Sample>> random_samples(const Graph& g, const std::vector<DimDeclaration>& decls,
                                           const InputValueOptions& values,
                                           std::vector<int64_t>& batch_sizes, uint64_t seed) {
  std::map<std::string, int64_t> dims = declared_dims(decls);
  // --shape binds the symbolic dims it names; the batch dim still varies per sample.
  HONE_TRY(InputPlan plan, parse_input_plan(values, g, dims));
  return random_samples_with(g, std::move(dims), decls, batch_sizes, seed,
                             [&plan](const Value& v, const std::map<std::string, int64_t>& d,
                                     std::mt19937_64& rng) { return make_input(v, plan, d, rng); });
}

/// One sample from DIR/input_<i>.npy or .pb (the layout `hone run --inputs` reads).
Result<std::vector<Sample>> one_sample(const std::string& dir, const Graph& g) {
  HONE_TRY(std::vector<Tensor> inputs, read_input_files(dir, g));
  std::vector<Sample> samples;
  samples.push_back(sample_in_graph_order(g, std::move(inputs)));
  return samples;
}

int run_tune(TuneCliOptions& o) {
  // First, so that under mpirun every later failure is the group's.
  auto dist_run = open_dist_run(o.dist);
  if (!dist_run) return report(dist_run.error());
  DistRun& dist = **dist_run;
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
  const int sources = !o.samples_dir.empty() + !o.inputs_dir.empty() + o.values.any();
  if (sources > 1)
    return usage_error(
        "give one of --samples DIR, --inputs DIR, or --shape/--fill/--range for random samples");
  // Without samples, a symbolic dim nobody bounds would be tuned at 1 alone and
  // the package would refuse every real input: assume bounds (logged first).
  if (sources == 0 || (o.values.any() && o.values.shapes.empty()))
    (void)assume_unbounded_dims(*graph, opts.dims);
  Result<std::vector<Sample>> samples =
      !o.samples_dir.empty()  ? load_samples(o.samples_dir, *graph)
      : !o.inputs_dir.empty() ? one_sample(o.inputs_dir, *graph)
                              : random_samples(*graph, opts.dims, o.values, batch_sizes, o.seed);
  if (!samples) {
    if (samples.error().code() == ErrorCode::kInvalidArgument && o.values.any())
      return usage_error(samples.error().message());
    return report(samples.error());
  }
  opts.batch_sizes = batch_sizes;
  apply_requested_threads();
  opts.threads = requested_threads() < 0 ? 0 : requested_threads();
  opts.baseline_gate_percent = o.gate;
  opts.use_cache = !o.no_cache;
  opts.cache_path = dist.cache_path(o.cache);
  opts.group = dist.group();
  opts.seed = o.seed;
  opts.batch_search.max_batch = o.max_batch;
  if (!o.tolerance.empty()) {
    auto tol = GateTolerance::parse(o.tolerance);
    if (!tol) return usage_error("--tolerance: " + tol.error().message());
    opts.tolerance = *tol;
  }
  if (o.precision == "auto" || o.precision == "auto,fp8" || o.precision == "fp8,auto") {
    opts.precision_auto = true;
    opts.precision_fp8 = o.precision != "auto";
  } else if (auto p = parse_precision(o.precision); !p || *p != Precision::kFp32) {
    return usage_error("--precision takes fp32, auto or auto,fp8, not '" + o.precision +
                       "' (one backend at one precision: --config BACKEND.precision=NAME)");
  }
  opts.mixed_precision = !o.no_mixed;
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
  if (auto same = dist.agree_model(*graph); !same) return report(same.error());
  auto progress = std::make_shared<Progress>(dist.tag());
  opts.progress = [progress](const TuneEvent& e) { (*progress)(e); };
  auto tuned = hone::tune(*graph, *samples, **strategy, opts);
  progress->finish();
  if (!tuned) return report(tuned.error().add_context("while tuning '" + o.model + "'"));
  const TuneReport& r = tuned->report();
  // The first sample goes into the package, so `hone bench PKG` runs on it.
  SaveOptions save_options;
  if (auto flat = tuned->spec().flatten((*samples)[0]))
    save_options.sample_inputs = std::move(*flat);
  auto package_sha = dist.save_agreed(*tuned, o.output, save_options);
  if (!package_sha) return report(package_sha.error());
  if (!dist.alone())
    fmt::print("{}decision {}, package sha256 {}: the same on every rank\n", dist.tag(),
               decision_hash(r.decision), *package_sha);
  if (dist.rank() != 0) return kExitOk;  // rank 0 prints and writes the reports
  fmt::print("{}", r.table());
  if (!o.report_json.empty())
    if (auto w = write_file_atomic(o.report_json, r.json() + "\n"); !w) return report(w.error());
  // The HTML report goes next to the package unless told otherwise.
  std::string html = o.report_html;
  if (html.empty() && !o.no_html)
    html = fs::path(o.output).replace_extension(".report.html").string();
  if (!html.empty())
    if (auto w = write_file_atomic(html, r.html()); !w) return report(w.error());
  std::error_code ec;
  fmt::print("saved {} ({} bytes; {} backend, tuned in {:.1f} s{})\n", o.output,
             fs::file_size(o.output, ec), r.decision.backend, r.total_ms / 1000.0,
             r.cache_used
                 ? fmt::format(", tuning cache {} hits / {} misses", r.cache_hits, r.cache_misses)
                 : "");
  if (!html.empty())
    fmt::print("report: {} (plots per backend and batch size, why each lost)\n", html);
  return kExitOk;
}

}  // namespace

void add_tune_command(CLI::App& root, std::vector<Command>& commands) {
  auto o = std::make_shared<TuneCliOptions>();
  CLI::App* sub = root.add_subcommand(
      "tune",
      "try backends, check each against the reference, measure, choose, save a .hone package");
  sub->footer(
      "Examples:\n"
      "  hone tune models/mlp.onnx -o mlp.hone               # writes mlp.report.html too\n"
      "  hone tune models/cnn.onnx -o cnn.hone --batch-sizes 1,8 --backends onednn,blas\n"
      "  hone tune model.onnx -o m.hone --samples samples/ --dim seq=1:16:64\n"
      "  hone tune models/cnn.onnx -o cnn.hone --strategy latency-budget:2\n"
      "  hone tune models/resnet.onnx -o r.hone --precision auto   # fp32 and bf16/tf32/fp16\n"
      "  hone tune models/vit.onnx -o v.hone --precision auto,fp8   # and fp8 where declared\n"
      "  hone tune models/cnn.onnx --dry-run\n"
      "  mpirun -np 2 hone tune models/cnn.onnx -o cnn.hone   # ranks measure, rank 0 decides");
  sub->add_option("model", o->model, "the .onnx file")->required()->type_name("MODEL.onnx");
  sub->add_option("-o,--output", o->output, "the package to write")->type_name("OUT.hone");
  sub->add_option(
         "--backends", o->backends,
         "candidates, comma-separated (default: every backend but the opt-in ones, such as select)")
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
  sub->add_option("--inputs", o->inputs_dir, "one sample from DIR/input_<i>.npy or .pb")
      ->type_name("DIR");
  add_input_value_options(*sub, o->values);
  sub->add_option("--dim", o->dims,
                  "declare a dim: NAME=MIN:OPT:MAX (dynamic) or NAME=V (static); repeatable. "
                  "Without samples, a dim other than the batch that none declares is assumed "
                  "1:128:512, or up to what the model's shapes take, and logged first")
      ->type_name("NAME=MIN:OPT:MAX");
  sub->add_option("--config", o->configs, "a backend's config field (repeatable)")
      ->type_name("BACKEND.FIELD=VALUE");
  sub->add_option("--report", o->report_json, "write the tuning report as JSON")
      ->type_name("FILE.json");
  sub->add_option("--html", o->report_html,
                  "where to write the HTML report with plots (default: OUT.report.html)")
      ->type_name("FILE.html");
  sub->add_flag("--no-html", o->no_html, "write no HTML report");
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
                  "be FACTOR x the f32 reference's, or the floors (default per precision; fp32: "
                  "100:1e-5:1e-4, tf32/fp16: 100:2e-3:2e-2, bf16: 100:2e-2:1e-1, fp8: "
                  "100:3e-1:1.5)")
      ->type_name("FACTOR[:FLOOR_REL_L2[:FLOOR_MAX]]");
  sub->add_option("--precision", o->precision,
                  "fp32 (the default): every candidate in strict fp32; auto: also every reduced "
                  "precision each backend declares (onednn: bf16 where the CPU has AVX-512 BF16; "
                  "cuda: tf32, bf16, fp16), each a candidate BACKEND@PRECISION judged against the "
                  "f64 truth by its precision's bound (or --tolerance); the strategy picks among "
                  "all that pass, and the package replays the precision; auto,fp8: also fp8 "
                  "(cuda on compute capability 8.9 or newer), left out of auto because its bound "
                  "is an order of magnitude looser (100:3e-1:1.5)")
      ->capture_default_str()
      ->type_name("fp32|auto|auto,fp8");
  sub->add_flag("--no-mixed", o->no_mixed,
                "under --precision auto, no bisection for the nodes to keep in fp32 when a "
                "reduced precision fails the gate");
  sub->add_option("--time-budget", o->time_budget,
                  "seconds for the whole tune; candidates not reached are skipped (0: no limit)")
      ->capture_default_str()
      ->type_name("SECONDS");
  sub->add_option("--candidate-budget", o->candidate_budget,
                  "seconds of profiling per candidate, shared by its batch sizes")
      ->capture_default_str()
      ->type_name("SECONDS");
  add_dist_options(*sub, o->dist, {"candidates"});
  commands.push_back({sub, [o] { return run_tune(*o); }});
}

}  // namespace hone::cli
