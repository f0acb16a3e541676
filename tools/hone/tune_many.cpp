// `hone tune-many MODEL... -o DIR`: tunes several models, one package each
// (DIR/<name>.hone), and writes one combined report (DIR/tune-many.json and
// a table). Under mpirun, `--distribute models` spreads the models over the
// ranks (model i on rank i mod N, each rank alone on its share with its own
// caches; rank 0 gathers the outcomes); without it every rank tunes every
// model and they agree on each, as `mpirun hone tune` does.
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "cli_common.h"
#include "dist_cli.h"
#include "hone/onnx.h"
#include "hone/package.h"
#include "hone/random_samples.h"
#include "hone/read_file.h"
#include "hone/sha256.h"
#include "hone/tune.h"

namespace hone::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct TuneManyOptions {
  std::vector<std::string> models;
  std::string out_dir;
  std::vector<std::string> backends;
  std::string strategy = "max-throughput";
  std::vector<int64_t> batch_sizes;
  std::vector<std::string> dims;
  bool no_cache = false;
  std::string cache;
  double candidate_budget = 3.0;
  double time_budget = 0;
  uint64_t seed = 1;
  std::string report_json;
  DistCliOptions dist;
};

/// How one model went, as the combined report lists it.
struct Outcome {
  std::string model, package, backend, decision, sha256, error;
  int rank = 0;  // the rank that tuned it (0 when all did)
  double seconds = 0;
  double best_throughput = 0;
};

json to_json(const Outcome& x) {
  return {{"model", x.model},
          {"package", x.package},
          {"backend", x.backend},
          {"decision", x.decision},
          {"package_sha256", x.sha256},
          {"error", x.error},
          {"rank", x.rank},
          {"seconds", x.seconds},
          {"best_throughput", x.best_throughput}};
}

Outcome outcome_from(const json& j) {
  Outcome x;
  x.model = j.value("model", "");
  x.package = j.value("package", "");
  x.backend = j.value("backend", "");
  x.decision = j.value("decision", "");
  x.sha256 = j.value("package_sha256", "");
  x.error = j.value("error", "");
  x.rank = j.value("rank", 0);
  x.seconds = j.value("seconds", 0.0);
  x.best_throughput = j.value("best_throughput", 0.0);
  return x;
}

/// Tunes `model` (random samples at the batch sizes, as `hone tune` without
/// --samples) and saves its package: through the group when `together`,
/// else alone (this rank's own file).
Result<Outcome> tune_one(const TuneManyOptions& o, const TuneOptions& base,
                         const Strategy& strategy, const std::string& model,
                         const fs::path& package, DistRun& run, bool together) {
  const auto t0 = std::chrono::steady_clock::now();
  HONE_TRY(Graph graph, onnx::load_model(model));
  std::vector<int64_t> batch_sizes = o.batch_sizes;
  TuneOptions opts = base;
  (void)assume_unbounded_dims(graph, opts.dims);  // logged, as `hone tune` does
  HONE_TRY(auto samples, random_samples(graph, opts.dims, batch_sizes, o.seed));
  opts.batch_sizes = batch_sizes;
  if (together) {
    opts.group = run.group();
    HONE_CHECK_OK(run.agree_model(graph));
  }
  HONE_TRY(TunedModel tuned, hone::tune(graph, samples, strategy, opts));
  SaveOptions save_options;
  if (auto flat = tuned.spec().flatten(samples[0])) save_options.sample_inputs = std::move(*flat);
  Outcome x;
  if (together) {
    HONE_TRY(x.sha256, run.save_agreed(tuned, package, save_options));
  } else {
    HONE_CHECK_OK(hone::save(tuned, package, save_options));
    HONE_TRY(auto bytes, read_regular_file(package, uint64_t{1} << 40));
    x.sha256 =
        sha256_hex(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  }
  x.model = model;
  x.package = package.string();
  x.backend = tuned.decision().backend;
  x.decision = decision_hash(tuned.decision());
  x.rank = together ? 0 : run.rank();
  x.best_throughput = 0;
  for (const auto& f : tuned.decision().figures)
    x.best_throughput = std::max(x.best_throughput, f.throughput);
  x.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return x;
}

int run_tune_many(TuneManyOptions& o) {
  auto dist_run = open_dist_run(o.dist);
  if (!dist_run) return report(dist_run.error());
  DistRun& run = **dist_run;
  const bool spread = o.dist.distribute == "models" && !run.alone();

  TuneOptions base;
  for (const std::string& d : o.dims) {
    auto decl = parse_dim_declaration(d);
    if (!decl) return usage_error("--dim " + d + ": " + decl.error().message());
    base.dims.push_back(*decl);
  }
  auto strategy = parse_strategy(o.strategy, o.backends);
  if (!strategy) return usage_error("--strategy: " + strategy.error().message());
  if (!(o.time_budget >= 0) || !(o.candidate_budget > 0))
    return usage_error("--time-budget must be >= 0 and --candidate-budget > 0 seconds");
  // One package per model, named by the model's file: two models of one name
  // would write one file.
  std::map<std::string, std::string> by_name;
  std::vector<fs::path> packages;
  for (const std::string& m : o.models) {
    const std::string name = fs::path(m).stem().string();
    if (auto [it, fresh] = by_name.emplace(name, m); !fresh)
      return usage_error(fmt::format("'{}' and '{}' would both be saved as {}.hone in {}",
                                     it->second, m, name, o.out_dir));
    packages.push_back(fs::path(o.out_dir) / (name + ".hone"));
  }
  std::error_code ec;
  fs::create_directories(o.out_dir, ec);
  if (ec)
    return report(Error(ErrorCode::kIo, fmt::format("cannot create the output folder '{}': {}",
                                                    o.out_dir, ec.message())));
  apply_requested_threads();
  base.threads = requested_threads() < 0 ? 0 : requested_threads();
  base.use_cache = !o.no_cache;
  base.cache_path = run.cache_path(o.cache);
  base.seed = o.seed;
  base.candidate_budget_s = o.candidate_budget;
  base.time_budget_s = o.time_budget;

  std::vector<Outcome> outcomes;
  for (size_t i = 0; i < o.models.size(); ++i) {
    if (spread && static_cast<int>(i % static_cast<size_t>(run.size())) != run.rank()) continue;
    fmt::print(stderr, "{}tune-many: [{}/{}] {}\n", run.tag(), i + 1, o.models.size(), o.models[i]);
    auto x = tune_one(o, base, **strategy, o.models[i], packages[i], run, !spread && !run.alone());
    if (!x && !run.alone() && !spread) {
      // Tuned together: a model failing on any rank fails every rank with its error.
      return report(x.error().add_context("while tuning '" + o.models[i] + "'"));
    }
    if (!x) {
      Outcome failed;
      failed.model = o.models[i];
      failed.rank = run.rank();
      failed.error = x.error().to_string();
      outcomes.push_back(failed);
      continue;
    }
    outcomes.push_back(*x);
  }
  // Rank 0 gathers every rank's outcomes (in a group that tuned together they are the same).
  json mine = json::array();
  for (const auto& x : outcomes) mine.push_back(to_json(x));
  auto all = run.exchange("tune-many outcomes", mine.dump());
  if (!all) return report(all.error());
  std::map<std::string, Outcome> merged;
  for (const std::string& text : *all)
    for (const auto& j : json::parse(text, nullptr, false)) {
      Outcome x = outcome_from(j);
      merged.emplace(x.model, x);
    }
  json list = json::array();
  int failed = 0;
  for (const std::string& m : o.models) {
    auto it = merged.find(m);
    if (it == merged.end()) continue;
    list.push_back(to_json(it->second));
    failed += it->second.error.empty() ? 0 : 1;
  }
  if (run.rank() == 0) {
    const json doc = {{"ranks", run.size()},
                      {"distribute", spread ? "models" : ""},
                      {"strategy", (*strategy)->describe()},
                      {"models", list}};
    const fs::path where =
        o.report_json.empty() ? fs::path(o.out_dir) / "tune-many.json" : fs::path(o.report_json);
    if (auto w = write_file_atomic(where, doc.dump(2) + "\n"); !w) return report(w.error());
    fmt::print("{:<32} {:>4} {:<10} {:>12} {:>8}  {}\n", "model", "rank", "backend", "throughput",
               "seconds", "package or error");
    for (const auto& j : list) {
      const Outcome x = outcome_from(j);
      fmt::print("{:<32} {:>4} {:<10} {:>12.1f} {:>8.1f}  {}\n",
                 fs::path(x.model).filename().string(), x.rank,
                 x.error.empty() ? x.backend : "failed", x.best_throughput, x.seconds,
                 x.error.empty() ? x.package : x.error);
    }
    fmt::print("report: {} ({} models on {} rank{})\n", where.string(), list.size(), run.size(),
               run.size() == 1 ? "" : "s");
  }
  if (failed > 0) {
    // Every rank knows the outcomes, so every rank ends alike without telling.
    fmt::print(stderr, "error: {}{} of {} models failed\n", run.tag(), failed, o.models.size());
    return kExitError;
  }
  return kExitOk;
}

}  // namespace

void add_tune_many_command(CLI::App& root, std::vector<Command>& commands) {
  auto o = std::make_shared<TuneManyOptions>();
  CLI::App* sub = root.add_subcommand(
      "tune-many", "tune several models, one package each, with one combined report");
  sub->footer(
      "Examples:\n"
      "  hone tune-many models/mlp.onnx models/cnn.onnx -o tuned/\n"
      "  mpirun -np 2 hone tune-many models/*.onnx -o tuned/ --distribute models");
  sub->add_option("models", o->models, "the .onnx files")->required()->type_name("MODEL.onnx...");
  sub->add_option("-o,--output", o->out_dir, "folder for the packages and the report")
      ->required()
      ->type_name("DIR");
  sub->add_option("--backends", o->backends, "candidates, comma-separated (default: every backend)")
      ->delimiter(',')
      ->type_name("A,B");
  sub->add_option("--strategy", o->strategy, "as in hone tune")->capture_default_str();
  sub->add_option("--batch-sizes", o->batch_sizes, "batch sizes to measure")
      ->delimiter(',')
      ->type_name("1,8");
  sub->add_option("--dim", o->dims, "declare a dim for every model, as in hone tune")
      ->type_name("NAME=MIN:OPT:MAX");
  sub->add_flag("--no-cache", o->no_cache, "neither read nor write the tuning cache");
  sub->add_option("--cache", o->cache, "the tuning cache database")->type_name("FILE");
  sub->add_option("--candidate-budget", o->candidate_budget, "seconds of profiling per candidate")
      ->capture_default_str()
      ->type_name("SECONDS");
  sub->add_option("--time-budget", o->time_budget, "seconds for each model's tune (0: no limit)")
      ->capture_default_str()
      ->type_name("SECONDS");
  sub->add_option("--seed", o->seed, "seed of the random samples")->capture_default_str();
  sub->add_option("--report", o->report_json, "the combined report (default DIR/tune-many.json)")
      ->type_name("FILE.json");
  add_dist_options(*sub, o->dist, {"models", "candidates"});
  commands.push_back({sub, [o] { return run_tune_many(*o); }});
}

}  // namespace hone::cli
