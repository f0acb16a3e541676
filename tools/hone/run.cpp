// `hone run MODEL.onnx`: one inference on a backend, with inputs from files
// (input_<i>.pb or input_<i>.npy) or seeded random ones, and outputs written
// as output_<i>.npy plus outputs.json.
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "eval/interpreter.h"
#include "eval/kernel_util.h"
#include "cli_common.h"
#include "hone/npy.h"
#include "hone/onnx.h"
#include "hone/registry.h"
#include "hone/sample.h"

namespace hone::cli {
namespace {

namespace fs = std::filesystem;

struct RunOptions {
  std::string model;
  std::string backend = "reference";
  IoOptions io;
};

Result<Tensor> read_input_file(const fs::path& dir, size_t i, const Value& v) {
  if (v.kind != ValueKind::kTensor)
    return fail(ErrorCode::kUnsupported, "input " + std::to_string(i) + " '" + v.name +
                                             "' is a sequence or optional; `hone run` feeds "
                                             "tensors only");
  auto t = load_input_file(dir, i);
  if (!t)
    return fail(std::move(t).error().add_context("while reading input " + std::to_string(i) + " '" +
                                                 v.name + "'"));
  return t;
}

int run_run(const RunOptions& o) {
  std::map<std::string, int64_t> dims;
  for (const std::string& d : o.io.dims) {
    auto r = parse_dim_binding(d, dims);
    if (!r) return usage_error(r.error().message());
  }
  if (!o.io.inputs_dir.empty() && o.io.seed)
    return usage_error("give either --inputs DIR or --random-inputs SEED, not both");

  auto graph = hone::onnx::load_model(o.model);
  if (!graph) return report(graph.error());
  const Graph& g = *graph;

  if (auto known = check_dim_bindings(g, dims); !known) return usage_error(known.error().message());

  auto backend = default_registry().create(o.backend);
  if (!backend) return report(backend.error());

  if (o.io.inputs_dir.empty() && !o.io.seed && !g.inputs().empty())
    return usage_error("the model has " + std::to_string(g.inputs().size()) +
                       " input(s); give them with --inputs DIR or --random-inputs SEED");
  std::vector<Tensor> inputs;
  std::mt19937_64 rng(o.io.seed.value_or(0));
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const Value& v = g.value(g.inputs()[i]);
    Result<Tensor> t = o.io.seed ? random_input(v, dims, rng) : read_input_file(o.io.inputs_dir, i, v);
    if (!t) return report(t.error());
    fmt::print("input {} '{}': {}\n", i, v.name, t->describe());
    inputs.push_back(std::move(*t));
  }

  // Check the inputs against the declared types before the (possibly slow)
  // build, so a wrong shape is reported as such whatever the backend.
  {
    std::vector<eval::RuntimeValue> values;
    for (const Tensor& t : inputs) values.push_back(eval::RuntimeValue::of(t));
    auto fits = eval::check_inputs(g, values);
    if (!fits) return report(fits.error());
  }
  apply_requested_threads();
  auto built = (*backend)->build(g);
  if (!built)
    return report(built.error().add_context("while building '" + o.model + "' on backend '" +
                                            o.backend + "'"));
  auto outputs = (*backend)->infer(inputs);
  if (!outputs) return report(outputs.error());

  std::vector<std::string> names;
  for (size_t i = 0; i < outputs->size(); ++i) {
    names.push_back(i < g.outputs().size() ? g.value(g.outputs()[i]).name
                                           : "output_" + std::to_string(i));
    print_output_summary(i, names.back(), (*outputs)[i]);
  }

  if (!o.io.outputs_dir.empty())
    if (auto w = write_outputs(o.io.outputs_dir, *outputs, names); !w) return report(w.error());
  return kExitOk;
}

}  // namespace

void add_run_command(CLI::App& root, std::vector<Command>& commands) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* sub = root.add_subcommand("run", "run one inference and write the outputs");
  sub->add_option("model", o->model, "the .onnx file")->required()->type_name("MODEL.onnx");
  sub->add_option("--backend", o->backend, "backend name (see `hone backends`)")
      ->capture_default_str();
  add_io_options(*sub, o->io);
  commands.push_back({sub, [o] { return run_run(*o); }});
}

}  // namespace hone::cli
