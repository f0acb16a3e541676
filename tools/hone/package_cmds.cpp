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
#include "hone/triton.h"

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
  std::string name;
  bool allow_env_mismatch = false;
};

/// `--format triton`: a model folder inside the Triton repository `o.output`.
int run_export_triton(const TunedModel& model, const ExportCliOptions& o) {
  if (!o.backend.empty())
    return usage_error("--format triton exports the ONNX graph; --backend does not apply");
  TritonOptions to;
  // The package's file name names the model unless --name does.
  to.name = o.name.empty() ? std::filesystem::path(o.package).stem().string() : o.name;
  auto rec = hone::export_triton(model, o.output, to);
  if (!rec) return report(rec.error());
  fmt::print(
      "exported '{}' to the Triton model repository {}:\n  {}/config.pbtxt\n  {}/1/model.onnx\n",
      rec->name, o.output, rec->model_dir.string(), rec->model_dir.string());
  fmt::print(
      "  max_batch_size {}{}\n", rec->max_batch_size,
      rec->max_batch_size > 0 ? ", dynamic batching on" : " (the model is not batched by Triton)");
  return kExitOk;
}

int run_export(const ExportCliOptions& o) {
  LoadOptions lo;
  lo.trusted_keys.assign(trust_options().trusted_keys.begin(), trust_options().trusted_keys.end());
  lo.allow_unsigned_native = trust_options().allow_unsigned_native;
  lo.allow_env_mismatch = o.allow_env_mismatch;
  auto model = hone::load(o.package, lo);
  if (!model) return report(model.error());
  if (o.format == "triton") return run_export_triton(*model, o);
  if (!o.name.empty()) return usage_error("--name applies to --format triton only");
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
  sub->footer(
      "Examples:\n"
      "  hone export mlp.hone --format onnx -o mlp-onnx/\n"
      "  hone export mlp.hone --format native-so --backend aot -o mlp-native/\n"
      "  hone export mlp.hone --format triton -o model_repository/   # adds model_repository/mlp/");
  sub->add_option("package", o->package, "the .hone file")->required()->type_name("OUT.hone");
  sub->add_option("--format", o->format,
                  "onnx, native-so or triton (default: the chosen backend's, else onnx)")
      ->type_name("FORMAT");
  sub->add_option("--backend", o->backend,
                  "build this backend for the artifact (e.g. aot for native-so)")
      ->type_name("NAME");
  sub->add_option("-o,--output", o->output,
                  "the folder to create (must not exist or be empty); for triton the model "
                  "repository, which may exist")
      ->required()
      ->type_name("DIR");
  sub->add_option("--name", o->name,
                  "the model's name in the Triton repository (default: the package's file name)")
      ->type_name("NAME");
  sub->add_flag("--allow-env-mismatch", o->allow_env_mismatch,
                "export a package tuned on another machine");
  commands.push_back({sub, [o] { return run_export(*o); }});
}

void add_infer_command(CLI::App& root, std::vector<Command>& commands) {
  auto o = std::make_shared<InferOptions>();
  CLI::App* sub = root.add_subcommand("infer", "run a tuned .hone package on inputs");
  sub->footer(
      "Examples:\n"
      "  hone infer mlp.hone --random-inputs 1 --dim batch=2\n"
      "  hone infer mlp.hone --inputs sample/ --outputs out/   # input_<i>.npy -> output_<i>.npy");
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
  sub->footer("Examples:\n  hone describe mlp.hone\n  hone describe mlp.hone --json");
  sub->add_option("package", *package, "the .hone file")->required()->type_name("OUT.hone");
  sub->add_flag("--json", *json, "print the verified manifest.json");
  commands.push_back({sub, [package, json] { return run_describe(*package, *json); }});
}

}  // namespace hone::cli
