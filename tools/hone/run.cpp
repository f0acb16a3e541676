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

#include "cli_common.h"
#include "hone/device_tensor.h"
#include "hone/npy.h"
#include "hone/onnx.h"
#include "hone/reference.h"
#include "hone/registry.h"
#include "hone/sample.h"
#include "hone/sample_folder.h"
#include "input_options.h"

namespace hone::cli {
namespace {

namespace fs = std::filesystem;

struct RunOptions {
  std::string model;
  std::string backend = hone::kReferenceBackend;
  std::vector<std::string> configs;  // FIELD=VALUE for that backend
  IoOptions io;
  InputValueOptions values;
  std::string memory = "host";  // host: infer(); device: infer_on_device() between copies
};

/// One inference whose inputs are copied to the device and whose outputs are
/// read back from it: the device-resident path (Backend::infer_on_device)
/// that a caller holding GPU buffers takes, checked on the same files.
Result<std::vector<Tensor>> infer_through_device(const Backend& b,
                                                 const std::vector<Tensor>& inputs) {
  std::vector<DeviceTensor> on_device;
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto d = b.to_device(inputs[i]);
    if (!d)
      return fail(std::move(d).error().add_context("while copying input " + std::to_string(i) +
                                                   " to the device"));
    on_device.push_back(std::move(*d));
  }
  DeviceCall call;
  call.synchronize = true;
  HONE_TRY(std::vector<DeviceTensor> ys, b.infer_on_device(on_device, call));
  std::vector<Tensor> out;
  for (size_t i = 0; i < ys.size(); ++i) {
    auto h = b.to_host(ys[i]);
    if (!h)
      return fail(std::move(h).error().add_context("while copying output " + std::to_string(i) +
                                                   " back from the device"));
    out.push_back(std::move(*h));
  }
  return out;
}

int run_run(const RunOptions& o) {
  std::map<std::string, int64_t> dims;
  for (const std::string& d : o.io.dims) {
    auto r = parse_dim_binding(d, dims);
    if (!r) return usage_error(r.error().message());
  }
  if (!o.io.inputs_dir.empty() && o.io.seed)
    return usage_error("give either --inputs DIR or --random-inputs SEED, not both");
  if (o.memory != "host" && o.memory != "device")
    return usage_error("--io '" + o.memory + "': expected host or device");

  auto graph = hone::onnx::load_model(o.model);
  if (!graph) return report(graph.error());
  const Graph& g = *graph;

  if (auto known = check_dim_bindings(g, dims); !known) return usage_error(known.error().message());

  auto backend = default_registry().create(o.backend);
  if (!backend) return report(backend.error());
  if (auto c = apply_configs(**backend, o.configs); !c) return report(c.error());

  // --shape/--fill/--range describe random inputs: they imply them (seed 0
  // unless --random-inputs gives one) and cannot be mixed with files.
  if (!o.io.inputs_dir.empty() && o.values.any())
    return usage_error("--shape, --fill and --range describe random inputs; not with --inputs DIR");
  const bool random = o.io.seed.has_value() || o.values.any();
  if (o.io.inputs_dir.empty() && !random && !g.inputs().empty())
    return usage_error("the model has " + std::to_string(g.inputs().size()) +
                       " input(s); give them with --inputs DIR or --random-inputs SEED");
  auto plan = parse_input_plan(o.values, g, dims);
  if (!plan) return usage_error(plan.error().message());
  if (!o.io.inputs_dir.empty())
    if (auto files = check_input_folder(o.io.inputs_dir, g.inputs().size()); !files)
      return report(files.error());
  std::vector<Tensor> inputs;
  if (random) {
    std::mt19937_64 rng(o.io.seed.value_or(0));
    for (ValueId id : g.inputs()) {
      auto t = make_input(g.value(id), *plan, dims, rng);
      if (!t) return report(t.error());
      inputs.push_back(std::move(*t));
    }
  } else if (!g.inputs().empty()) {
    auto read = read_input_files(o.io.inputs_dir, g);
    if (!read) return report(read.error());
    inputs = std::move(*read);
  }
  for (size_t i = 0; i < inputs.size(); ++i)
    fmt::print("input {} '{}': {}\n", i, g.value(g.inputs()[i]).name, inputs[i].describe());

  // Check the inputs against the declared types before the (possibly slow)
  // build, so a wrong shape is reported as such whatever the backend.
  if (auto fits = check_inputs(g, inputs); !fits) return report(fits.error());
  // A backend that sizes its buffers by bounds (aot) gets this run's dims as
  // the bounds of the input symbols; it derives the inner dims from them.
  if (auto c = bound_dims_by_inputs(**backend, g, inputs); !c) return report(c.error());
  apply_requested_threads();
  auto built = (*backend)->build(g);
  if (!built)
    return report(built.error().add_context("while building '" + o.model + "' on backend '" +
                                            o.backend + "'"));
  auto outputs =
      o.memory == "device" ? infer_through_device(**backend, inputs) : (*backend)->infer(inputs);
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
  sub->footer(
      "Examples:\n"
      "  hone run models/cnn.onnx --random-inputs 7 --dim batch=4 --outputs out/\n"
      "  hone run model.onnx --backend onednn --inputs test_data_set_0/\n"
      "  hone run model.onnx --backend cuda --inputs in/ --io device   # the device-resident path");
  sub->add_option("model", o->model, "the .onnx file")->required()->type_name("MODEL.onnx");
  sub->add_option("--backend", o->backend, "backend name (see `hone backends`)")
      ->capture_default_str();
  sub->add_option("--config", o->configs, "a backend config field for --backend (repeatable)")
      ->type_name("FIELD=VALUE");
  add_io_options(*sub, o->io);
  add_input_value_options(*sub, o->values);
  sub->add_option("--io", o->memory,
                  "host: inputs and outputs in host memory (infer); device: the inputs copied to "
                  "the device, one infer_on_device call, the outputs copied back (backends with a "
                  "device only)")
      ->capture_default_str();
  commands.push_back({sub, [o] { return run_run(*o); }});
}

}  // namespace hone::cli
