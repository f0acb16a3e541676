// `hone inspect-run`: runs a model (with sample inputs) or a pipeline
// description just in time, then writes the inspection page and its JSON.
//
//   hone inspect-run MODEL.onnx --random-inputs 1 --dim batch=1,4 --calls 6 -o run.html
//   hone inspect-run MODEL.onnx --inputs s0 --inputs s1 --mode eager --backend onednn -o run.html
//   hone inspect-run --pipeline two_stage.json -o run.html     (format: pipeline_description.h)
//
// Calls cycle through the --inputs folders, or through the --dim values with
// seeded random inputs. Eager models tune in the background and the command
// waits for them; deferred ones are asked to tune after the calls and one
// more call (the first's inputs) starts the tune. A failed tune is not a
// failed command: the page says why.
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "cli_common.h"
#include "hone/jit.h"
#include "hone/onnx.h"
#include "hone/pipeline.h"
#include "hone/sample.h"
#include "hone/strategy.h"
#include "pipeline_description.h"

namespace hone::cli {
namespace {

namespace fs = std::filesystem;
using DimValues = std::map<std::string, std::vector<int64_t>>;

struct InspectRunOptions {
  std::string model;
  std::string pipeline;
  std::vector<std::string> inputs_dirs;
  std::optional<uint64_t> seed;
  std::vector<std::string> dims;  // NAME=V1,V2,...
  std::optional<size_t> calls;
  std::string mode = "inspect";
  std::string backend;
  std::optional<size_t> min_samples;
  bool batch_axis_required = false;
  std::string out;
};

Result<void> parse_dims(const std::vector<std::string>& texts, DimValues& out) {
  for (const std::string& t : texts) {
    const auto eq = t.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == t.size())
      return fail(ErrorCode::kInvalidArgument, "--dim '" + t + "': expected NAME=SIZE[,SIZE...]");
    std::vector<int64_t> values;
    size_t p = eq + 1;
    while (p <= t.size()) {
      const size_t comma = std::min(t.find(',', p), t.size());
      const std::string v = t.substr(p, comma - p);
      try {
        size_t used = 0;
        const long long x = std::stoll(v, &used);
        if (used != v.size() || x < 0) throw std::invalid_argument(v);
        values.push_back(x);
      } catch (const std::exception&) {
        return fail(ErrorCode::kInvalidArgument,
                    "--dim '" + t + "': '" + v + "' is not a non-negative integer");
      }
      p = comma + 1;
    }
    out[t.substr(0, eq)] = std::move(values);
  }
  return {};
}

std::map<std::string, int64_t> dims_of_call(const DimValues& dims, size_t k) {
  std::map<std::string, int64_t> d;
  for (const auto& [name, values] : dims) d[name] = values[k % values.size()];
  return d;
}

TuneOptions tune_options() {
  TuneOptions t;
  if (requested_threads() >= 0) t.threads = requested_threads();
  return t;
}

std::shared_ptr<const Strategy> strategy_for(const std::string& backend) {
  if (backend.empty()) return std::make_shared<MaxThroughput>();
  return std::make_shared<OneBackend>(backend, /*fallback_when_slower=*/false);
}

Result<JitOptions> jit_options(const std::string& mode, std::optional<size_t> min_samples,
                               bool batch_axis_required, size_t calls) {
  JitOptions o;
  HONE_TRY(o.mode, parse_jit_mode(mode));
  // By default an eager model tunes after half the calls, so the rest run tuned.
  o.min_samples = min_samples.value_or(std::max<size_t>(1, calls / 2));
  o.batch_axis_required = batch_axis_required;
  o.tune = tune_options();
  return o;
}

void print_tree(const InspectionNode& n, int depth) {
  fmt::print("{:{}}{} ({}): {} calls, {:.3f} ms, {}{}{}\n", "", 2 * depth, n.name, n.kind, n.calls,
             n.total_ms, n.state.empty() ? "-" : n.state,
             n.backend.empty() ? "" : " on " + n.backend, n.reason.empty() ? "" : ": " + n.reason);
  for (const auto& c : n.children) print_tree(c, depth + 1);
}

int finish(const InspectionNode& root, const std::string& out) {
  print_tree(root, 0);
  if (auto ok = save_inspection_report(root, out); !ok) return report(ok.error());
  fs::path json = out;
  json.replace_extension(".json");
  fmt::print("wrote {} and {}\n", out, json.string());
  return kExitOk;
}

int run_model(const InspectRunOptions& o, const DimValues& dims) {
  auto graph = hone::onnx::load_model(o.model);
  if (!graph) return report(graph.error());
  const Graph& g = *graph;
  std::map<std::string, int64_t> probe;
  for (const auto& [name, v] : dims) probe[name] = v[0];
  if (auto known = check_dim_bindings(g, probe); !known)
    return usage_error(known.error().message());
  const size_t calls = o.calls.value_or(o.inputs_dirs.empty() ? 4 : o.inputs_dirs.size());
  auto jo = jit_options(o.mode, o.min_samples, o.batch_axis_required, calls);
  if (!jo) return usage_error("--mode: " + jo.error().message());
  apply_requested_threads();
  JitModel jit(g, strategy_for(o.backend), std::move(*jo));
  std::mt19937_64 rng(o.seed.value_or(1));
  std::vector<Tensor> first;
  auto call = [&](size_t k) -> Result<void> {
    std::vector<Tensor> inputs;
    for (size_t i = 0; i < g.inputs().size(); ++i) {
      const Value& v = g.value(g.inputs()[i]);
      auto t = o.inputs_dirs.empty() ? random_input(v, dims_of_call(dims, k), rng)
                                     : load_input_file(o.inputs_dirs[k % o.inputs_dirs.size()], i);
      if (!t)
        return fail(std::move(t).error().add_context(
            fmt::format("while preparing input {} '{}' of call {}", i, v.name, k)));
      inputs.push_back(std::move(*t));
    }
    if (k == 0) first = inputs;
    auto y = jit.infer_flat(inputs);
    if (!y) return fail(std::move(y).error().add_context(fmt::format("in call {}", k)));
    return {};
  };
  for (size_t k = 0; k < calls; ++k)
    if (auto ok = call(k); !ok) return report(ok.error());
  if (jit.mode() == JitMode::kTuneDeferred) {
    if (auto armed = jit.tune_deferred(); armed) {
      if (auto y = jit.infer_flat(first); !y) return report(y.error());
    }
  }
  jit.wait();
  return finish(jit.inspect(g.name().empty() ? fs::path(o.model).stem().string() : g.name()),
                o.out);
}

int run_pipeline(const InspectRunOptions& o, DimValues dims) {
  auto d = load_pipeline_description(o.pipeline);
  if (!d) return report(d.error());
  for (const auto& [name, v] : d->dims) dims.try_emplace(name, v);  // --dim wins
  const size_t calls = o.calls.value_or(d->calls.value_or(4));
  apply_requested_threads();
  Pipeline p({.min_time_share = d->min_time_share});
  std::vector<Graph> graphs;
  for (const auto& s : d->stages) {
    auto g = hone::onnx::load_model(s.model);
    if (!g) return report(g.error().add_context("while loading stage '" + s.name + "'"));
    Result<void> added;
    if (s.mode == "plain") {
      added = p.add_stage(s.name, *g);
    } else {
      auto jo = jit_options(s.mode, s.min_samples, s.batch_axis_required, calls);
      if (!jo) return report(jo.error());
      added = p.add_jit_stage(s.name, *g, strategy_for(s.backend), std::move(*jo));
    }
    if (!added) return report(added.error());
    graphs.push_back(std::move(*g));
  }
  // The pipeline's own inputs: what a stage reads that no earlier stage gives.
  std::vector<const Value*> needed;
  {
    std::set<std::string> given;
    for (const Graph& g : graphs) {
      for (ValueId id : g.inputs())
        if (!given.count(g.value(id).name)) {
          needed.push_back(&g.value(id));
          given.insert(g.value(id).name);
        }
      for (ValueId id : g.outputs()) given.insert(g.value(id).name);
    }
  }
  // Every dim named (on the command line or in the description) must be one
  // of the pipeline inputs' symbolic dims.
  std::set<std::string> symbols;
  for (const Value* v : needed)
    if (v->shape)
      for (const Dim& dim : v->shape->dims())
        if (dim.is_symbolic()) symbols.insert(dim.symbol_name());
  for (const auto& [name, values] : dims)
    if (!symbols.count(name)) {
      std::string known;
      for (const auto& s : symbols) known += (known.empty() ? "" : ", ") + s;
      return usage_error("dim '" + name +
                         "': the pipeline's inputs have no dimension of that name (" +
                         (known.empty() ? "none" : known) + ")");
    }
  std::mt19937_64 rng(o.seed.value_or(d->seed.value_or(1)));
  TensorMap first;
  for (size_t k = 0; k < calls; ++k) {
    TensorMap in;
    for (const Value* v : needed) {
      auto t = random_input(*v, dims_of_call(dims, k), rng);
      if (!t) return report(t.error().add_context(fmt::format("while preparing call {}", k)));
      in[v->name] = std::move(*t);
    }
    if (k == 0) first = in;
    if (auto y = p.run(in); !y) return report(y.error().add_context(fmt::format("in call {}", k)));
  }
  bool armed = false;
  for (const auto& s : d->stages)
    if (s.mode == "deferred") armed = p.tune_deferred(s.name).has_value() || armed;
  if (armed)
    if (auto y = p.run(first); !y) return report(y.error());
  p.wait();
  return finish(p.inspect(d->name), o.out);
}

int run_inspect_run(const InspectRunOptions& o) {
  if (o.model.empty() == o.pipeline.empty())
    return usage_error("give either MODEL.onnx or --pipeline DESCRIPTION.json");
  if (!o.inputs_dirs.empty() && o.seed)
    return usage_error("give either --inputs DIR or --random-inputs SEED, not both");
  if (!o.pipeline.empty() && !o.inputs_dirs.empty())
    return usage_error("--inputs is for a model; a pipeline's calls use random inputs");
  if (o.calls && *o.calls == 0) return usage_error("--calls must be at least 1");
  if (fs::path(o.out).extension() == ".json")
    return usage_error("-o names the page (.html); the JSON is written beside it");
  DimValues dims;
  if (auto ok = parse_dims(o.dims, dims); !ok) return usage_error(ok.error().message());
  if (!o.pipeline.empty()) {
    if (o.mode != "inspect" || !o.backend.empty() || o.min_samples)
      return usage_error("--mode, --backend and --min-samples are per stage in the description");
    return run_pipeline(o, std::move(dims));
  }
  if (o.inputs_dirs.empty() && !o.seed) {
    InspectRunOptions seeded = o;
    seeded.seed = 1;  // random inputs by default
    return run_model(seeded, dims);
  }
  return run_model(o, dims);
}

}  // namespace

void add_inspect_run_command(CLI::App& root, std::vector<Command>& commands) {
  auto o = std::make_shared<InspectRunOptions>();
  CLI::App* sub = root.add_subcommand(
      "inspect-run",
      "run a model or a pipeline just in time and write the inspection page (and its JSON)");
  sub->add_option("model", o->model, "the .onnx file")->type_name("MODEL.onnx");
  sub->add_option("--pipeline", o->pipeline, "a pipeline description (JSON)")
      ->type_name("DESCRIPTION.json");
  sub->add_option("--inputs", o->inputs_dirs,
                  "a sample folder (input_<i>.pb or .npy); repeat for more calls")
      ->type_name("DIR");
  sub->add_option("--random-inputs", o->seed, "seeded random inputs (the default, seed 1)")
      ->type_name("SEED");
  sub->add_option("--dim", o->dims, "sizes of a symbolic dim, cycled over the calls (repeatable)")
      ->type_name("NAME=SIZE[,SIZE...]");
  sub->add_option("--calls", o->calls, "calls to make (default: one per --inputs, else 4)")
      ->type_name("N");
  sub->add_option("--mode", o->mode, "inspect (never tunes), eager or deferred")
      ->capture_default_str();
  sub->add_option("--backend", o->backend, "tune on this backend only (default: MaxThroughput)")
      ->type_name("NAME");
  sub->add_option("--min-samples", o->min_samples, "calls before an eager tune (default: half)")
      ->type_name("N");
  sub->add_flag("--batch-axis-required", o->batch_axis_required,
                "an eager tune also waits for two batch sizes");
  sub->add_option("-o,--output", o->out, "the page to write; the JSON goes beside it (.json)")
      ->required()
      ->type_name("PAGE.html");
  commands.push_back({sub, [o] { return run_inspect_run(*o); }});
}

}  // namespace hone::cli
