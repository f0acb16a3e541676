// `hone infer OUT.hone`, `hone describe OUT.hone` and `hone export OUT.hone`:
// run a tuned package (inputs and outputs as for `hone run`), say what it
// holds, and write its deployable artifact.
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "cli_common.h"
#include "hone/export.h"
#include "hone/package.h"

namespace hone::cli {
namespace {

struct InferOptions {
  std::string package;
  IoOptions io;
  bool allow_env_mismatch = false;
};

int run_infer(const InferOptions& o) {
  std::map<std::string, int64_t> dims;
  for (const std::string& d : o.io.dims)
    if (auto r = parse_dim_binding(d, dims); !r) return usage_error(r.error().message());
  if (!o.io.inputs_dir.empty() && o.io.seed)
    return usage_error("give either --inputs DIR or --random-inputs SEED, not both");
  if (o.io.inputs_dir.empty() && !o.io.seed)
    return usage_error("give the inputs with --inputs DIR or --random-inputs SEED");
  apply_requested_threads();
  LoadOptions lo;
  lo.trusted_keys.assign(trust_options().trusted_keys.begin(), trust_options().trusted_keys.end());
  lo.allow_unsigned_native = trust_options().allow_unsigned_native;
  lo.allow_env_mismatch = o.allow_env_mismatch;
  lo.threads = requested_threads();
  auto model = hone::load(o.package, lo);
  if (!model) return report(model.error());
  const Graph& g = model->graph();

  std::vector<Tensor> inputs;
  if (o.io.seed) {
    if (auto known = check_dim_bindings(g, dims); !known)
      return usage_error(known.error().message());
    std::mt19937_64 rng(*o.io.seed);
    for (ValueId id : g.inputs()) {
      auto t = random_input(g.value(id), dims, rng);
      if (!t) return report(t.error());
      inputs.push_back(std::move(*t));
    }
  } else {
    auto samples = load_samples(o.io.inputs_dir, g);
    if (!samples) return report(samples.error());
    if (samples->size() != 1)
      return usage_error(fmt::format("--inputs {} holds {} samples; `hone infer` runs one",
                                     o.io.inputs_dir, samples->size()));
    auto flat = model->spec().flatten(samples->front());
    if (!flat) return report(flat.error());
    inputs = std::move(*flat);
  }
  for (size_t i = 0; i < inputs.size(); ++i)
    fmt::print("input {} '{}': {}\n", i, g.value(g.inputs()[i]).name, inputs[i].describe());
  auto outputs = model->infer_flat(inputs);
  if (!outputs) return report(outputs.error());
  std::vector<std::string> names;
  for (size_t i = 0; i < outputs->size(); ++i) {
    names.push_back(i < g.outputs().size() ? g.value(g.outputs()[i]).name
                                           : "output_" + std::to_string(i));
    print_output_summary(i, names.back(), (*outputs)[i]);
  }
  fmt::print("ran on {} (from {})\n", model->decision().backend, o.package);
  if (!o.io.outputs_dir.empty())
    if (auto w = write_outputs(o.io.outputs_dir, *outputs, names); !w) return report(w.error());
  return kExitOk;
}

int run_describe(const std::string& package, bool json) {
  auto text = json ? hone::package_manifest(package) : hone::describe_package(package);
  if (!text) return report(text.error());
  fmt::print("{}{}", *text, text->ends_with('\n') ? "" : "\n");
  return kExitOk;
}

struct ExportCliOptions {
  std::string package;
  std::string format;
  std::string backend;
  std::string output;
  bool allow_env_mismatch = false;
};

int run_export(const ExportCliOptions& o) {
  LoadOptions lo;
  lo.trusted_keys.assign(trust_options().trusted_keys.begin(), trust_options().trusted_keys.end());
  lo.allow_unsigned_native = trust_options().allow_unsigned_native;
  lo.allow_env_mismatch = o.allow_env_mismatch;
  auto model = hone::load(o.package, lo);
  if (!model) return report(model.error());
  ExportOptions eo;
  eo.format = o.format;
  eo.backend = o.backend;
  auto rec = hone::export_artifact(*model, o.output, eo);
  if (!rec) return report(rec.error());
  fmt::print("exported {} artifact of '{}' (by {}) to {}:\n", rec->format, model->graph().name(),
             rec->backend, o.output);
  for (const auto& [file, sum] : rec->files)
    fmt::print("  {}  sha256 {}\n", file, sum.substr(0, 16));
  fmt::print("  deploy.json (format, files, runtime config, tensor specs, max batch measured {})\n",
             rec->max_batch_measured);
  return kExitOk;
}

}  // namespace

void add_export_command(CLI::App& root, std::vector<Command>& commands) {
  auto o = std::make_shared<ExportCliOptions>();
  CLI::App* sub =
      root.add_subcommand("export", "write a package's deployable artifact (runs without hone)");
  sub->add_option("package", o->package, "the .hone file")->required()->type_name("OUT.hone");
  sub->add_option("--format", o->format,
                  "onnx or native-so (default: the chosen backend's, else onnx)")
      ->type_name("FORMAT");
  sub->add_option("--backend", o->backend,
                  "build this backend for the artifact (e.g. aot for native-so)")
      ->type_name("NAME");
  sub->add_option("-o,--output", o->output, "the folder to create (must not exist or be empty)")
      ->required()
      ->type_name("DIR");
  sub->add_flag("--allow-env-mismatch", o->allow_env_mismatch,
                "export a package tuned on another machine");
  commands.push_back({sub, [o] { return run_export(*o); }});
}

void add_infer_command(CLI::App& root, std::vector<Command>& commands) {
  auto o = std::make_shared<InferOptions>();
  CLI::App* sub = root.add_subcommand("infer", "run a tuned .hone package on inputs");
  sub->add_option("package", o->package, "the .hone file")->required()->type_name("OUT.hone");
  add_io_options(*sub, o->io);
  sub->add_flag("--allow-env-mismatch", o->allow_env_mismatch,
                "run a package tuned on another machine (rebuilds its backend here)");
  commands.push_back({sub, [o] { return run_infer(*o); }});
}

void add_describe_command(CLI::App& root, std::vector<Command>& commands) {
  auto package = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  CLI::App* sub =
      root.add_subcommand("describe", "what a .hone package holds and how it was chosen");
  sub->add_option("package", *package, "the .hone file")->required()->type_name("OUT.hone");
  sub->add_flag("--json", *json, "print the verified manifest.json");
  commands.push_back({sub, [package, json] { return run_describe(*package, *json); }});
}

}  // namespace hone::cli
