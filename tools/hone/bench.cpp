// `hone bench MODEL.onnx`: latency percentiles and throughput of one backend
// on seeded random inputs, after warm-up. Speed figures belong here (and in
// bench/), never in timed unit tests.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "cli_common.h"
#include "hone/onnx.h"
#include "hone/package.h"
#include "hone/registry.h"
#include "hone/thread_pool.h"
#include "input_options.h"

namespace hone::cli {
namespace {

struct BenchOptions {
  std::string model;
  std::string backend = hone::kReferenceBackend;
  std::vector<std::string> configs;  // FIELD=VALUE for that backend
  std::optional<int64_t> batch;      // 1 unless given
  std::vector<std::string> dims;
  std::string inputs_dir;
  InputValueOptions values;
  int iters = 100;
  int warmup = 10;
  uint64_t seed = 1;
  bool json = false;
  bool pageable = false;    // inputs in ordinary memory, not the backend's allocate_host()
  std::string io = "host";  // host: infer(); device: infer_on_device() on device-resident inputs
};

/// Host/device copies between two readings of Backend::transfers().
nlohmann::json copies_between(const TransferCounts& a, const TransferCounts& b) {
  return {{"host_to_device", b.host_to_device - a.host_to_device},
          {"host_to_device_bytes", b.host_to_device_bytes - a.host_to_device_bytes},
          {"device_to_host", b.device_to_host - a.device_to_host},
          {"device_to_host_bytes", b.device_to_host_bytes - a.device_to_host_bytes}};
}

/// Nearest-rank percentile of sorted `v` (q in [0,1]).
double percentile(const std::vector<double>& v, double q) {
  const size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
  return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}

/// The batch of inputs that were not generated: the leading dim of the first
/// input whose declared leading dim is symbolic.
std::optional<int64_t> input_batch(const Graph& g, const std::vector<Tensor>& inputs) {
  for (size_t i = 0; i < inputs.size() && i < g.inputs().size(); ++i) {
    const Value& v = g.value(g.inputs()[i]);
    if (v.shape && v.shape->rank() > 0 && v.shape->dims()[0].is_symbolic() && inputs[i].rank() > 0)
      return inputs[i].shape()[0];
  }
  return std::nullopt;
}

int run_bench(const BenchOptions& o) {
  if (o.iters < 1) return usage_error("--iters must be at least 1");
  if (o.warmup < 0) return usage_error("--warmup must not be negative");
  if (o.io != "host" && o.io != "device")
    return usage_error("--io '" + o.io + "': expected host or device");
  if (o.io == "device" && o.pageable)
    return usage_error(
        "--pageable-inputs is for --io host: with --io device the inputs are in "
        "device memory");
  if (o.batch && *o.batch < 1) return usage_error("--batch must be at least 1");
  if (!o.inputs_dir.empty() && (o.values.any() || o.batch || !o.dims.empty()))
    return usage_error(
        "--inputs DIR gives every input; --batch, --dim, --shape, --fill and --range "
        "describe random ones");
  // A .hone package runs on the backend tuning chose; a model on --backend.
  const bool is_package = std::filesystem::path(o.model).extension() == ".hone";
  std::optional<TunedModel> tuned;
  std::optional<Graph> model_graph;
  if (is_package && !o.configs.empty())
    return usage_error("--config sets a backend's fields for a model; a package keeps its own");
  if (is_package) {
    apply_requested_threads();
    LoadOptions lo;
    lo.trusted_keys.assign(trust_options().trusted_keys.begin(),
                           trust_options().trusted_keys.end());
    lo.allow_unsigned_native = trust_options().allow_unsigned_native;
    lo.threads = requested_threads();
    auto m = hone::load(o.model, lo);
    if (!m) return report(m.error());
    tuned.emplace(std::move(*m));
  } else {
    auto graph = hone::onnx::load_model(o.model);
    if (!graph) return report(graph.error());
    model_graph.emplace(std::move(*graph));
  }
  const Graph& g = is_package ? tuned->graph() : *model_graph;

  // Symbolic dims: --dim, then --shape; --batch binds the symbolic leading
  // dim of every input not bound already (and must agree with one that is).
  std::map<std::string, int64_t> dims;
  for (const std::string& d : o.dims) {
    auto r = parse_dim_binding(d, dims);
    if (!r) return usage_error(r.error().message());
  }
  if (auto known = check_dim_bindings(g, dims); !known) return usage_error(known.error().message());
  auto plan = parse_input_plan(o.values, g, dims);
  if (!plan) return usage_error(plan.error().message());
  std::optional<int64_t> leading;  // the batch the inputs really have
  for (ValueId id : g.inputs()) {
    const Value& v = g.value(id);
    if (!v.shape || v.shape->rank() == 0 || !v.shape->dims()[0].is_symbolic()) continue;
    const std::string& sym = v.shape->dims()[0].symbol_name();
    auto it = dims.find(sym);
    if (it == dims.end()) it = dims.emplace(sym, o.batch.value_or(1)).first;
    if (o.batch && it->second != *o.batch)
      return usage_error(
          fmt::format("--batch {}: input '{}' has its leading dim '{}' set to {} already", *o.batch,
                      v.name, sym, it->second));
    leading = it->second;
  }
  // Throughput counts --batch samples per call, so a batch the model cannot take is an error.
  if (!leading && o.batch && *o.batch != 1)
    return usage_error("--batch " + std::to_string(*o.batch) +
                       ": no input of the model has a symbolic leading dim to set");

  // Inputs: files; else the sample a package stores, unless the inputs are
  // described (--batch, --dim, --shape, --fill, --range); else random.
  std::vector<Tensor> inputs;
  std::string inputs_from = "random";
  if (!o.inputs_dir.empty()) {
    auto read = read_input_files(o.inputs_dir, g);
    if (!read) return report(read.error());
    inputs = std::move(*read);
    inputs_from = o.inputs_dir;
  } else if (is_package && !o.values.any() && !o.batch && o.dims.empty()) {
    auto stored = load_package_samples(o.model);
    if (stored) {
      inputs = std::move(*stored);
      inputs_from = "package sample";
    } else if (stored.error().code() != ErrorCode::kNotFound) {
      return report(stored.error());
    }
  }
  if (inputs_from == "random") {
    std::mt19937_64 rng(o.seed);
    for (ValueId id : g.inputs()) {
      auto t = make_input(g.value(id), *plan, dims, rng);
      if (!t) return report(t.error());
      inputs.push_back(std::move(*t));
    }
  } else {
    leading = input_batch(g, inputs);
  }
  const int64_t batch = leading.value_or(1);

  apply_requested_threads();
  std::unique_ptr<Backend> owned;
  const auto t0 = std::chrono::steady_clock::now();
  if (!is_package) {
    auto backend = default_registry().create(o.backend);
    if (!backend) return report(backend.error());
    if (auto c = apply_configs(**backend, o.configs); !c) return report(c.error());
    // aot sizes its buffers for the inputs benchmarked, as `run` does.
    if (auto c = bound_dims_by_inputs(**backend, g, inputs); !c) return report(c.error());
    if (auto built = (*backend)->build(g); !built)
      return report(built.error().add_context("while building '" + o.model + "' on backend '" +
                                              o.backend + "'"));
    owned = std::move(*backend);
  }
  const Backend* backend = is_package ? &tuned->backend() : owned.get();
  const std::string backend_name(backend->name());
  const double build_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  // The inputs live where the backend copies from fastest, as a serving
  // client's buffers would (page-locked memory on cuda), unless asked not to.
  std::string memory = "ordinary";
  // --io device: the inputs are copied to the device once, untimed; each
  // timed call reads them there and leaves its outputs there (synchronized,
  // so a call's time is the device's work and the launch, as a caller that
  // waits for the result sees it).
  std::vector<DeviceTensor> device_inputs;
  if (o.io == "device") {
    for (const Tensor& t : inputs) {
      auto d = backend->to_device(t);
      if (!d) return report(d.error().add_context("while copying the inputs to the device"));
      device_inputs.push_back(std::move(*d));
    }
    memory = "device";
  } else if (!o.pageable) {
    for (Tensor& t : inputs) {
      auto h = backend->allocate_host(t.dtype(), t.shape());
      if (!h) return report(h.error().add_context("while allocating the inputs' memory"));
      if (t.nbytes() > 0) std::memcpy(h->raw(), t.raw(), t.nbytes());
      t = std::move(*h);
    }
    memory = "backend";
  }

  DeviceCall call;
  call.synchronize = true;
  auto infer_once = [&]() -> Result<void> {
    if (o.io == "device") {
      auto y = backend->infer_on_device(device_inputs, call);
      if (!y) return fail(std::move(y).error());
      return {};
    }
    auto y = backend->infer(inputs);
    if (!y) return fail(std::move(y).error());
    return {};
  };
  for (int i = 0; i < o.warmup; ++i)
    if (auto y = infer_once(); !y) return report(y.error());
  const std::optional<TransferCounts> copies_before = backend->transfers();
  std::vector<double> ms, device_ms;
  ms.reserve(static_cast<size_t>(o.iters));
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < o.iters; ++i) {
    const std::optional<uint64_t> d0 = backend->device_nanoseconds();
    const auto a = std::chrono::steady_clock::now();
    auto y = infer_once();
    const auto b = std::chrono::steady_clock::now();
    if (!y) return report(y.error());
    ms.push_back(std::chrono::duration<double, std::milli>(b - a).count());
    if (const std::optional<uint64_t> d1 = backend->device_nanoseconds(); d0 && d1)
      device_ms.push_back(static_cast<double>(*d1 - *d0) / 1e6);
  }
  const double total_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::sort(ms.begin(), ms.end());
  std::sort(device_ms.begin(), device_ms.end());
  const double p50 = percentile(ms, 0.50), p90 = percentile(ms, 0.90), p99 = percentile(ms, 0.99);
  const double throughput = static_cast<double>(batch) * o.iters / total_s;
  const int threads = ThreadPool::global().num_threads();
  const std::optional<TransferCounts> copies_after = backend->transfers();
  const nlohmann::json copies = copies_before && copies_after
                                    ? copies_between(*copies_before, *copies_after)
                                    : nlohmann::json();

  if (o.json) {
    nlohmann::json j = {{"model", o.model},
                        {"backend", backend_name},
                        {"threads", threads},
                        {"batch", batch},
                        {"inputs", inputs_from},
                        {"input_memory", memory},
                        {"io", o.io},
                        {"iters", o.iters},
                        {"warmup", o.warmup},
                        {"seed", o.seed},
                        {"build_ms", build_ms},
                        {"p50_ms", p50},
                        {"p90_ms", p90},
                        {"p99_ms", p99},
                        {"min_ms", ms.front()},
                        {"max_ms", ms.back()},
                        {"throughput_per_s", throughput},
                        {"executions", backend->executions()}};
    if (!copies.is_null()) j["host_copies"] = copies;  // during the timed runs
    if (!device_ms.empty())                            // an accelerator's own time, copies excluded
      j["device"] = {{"p50_ms", percentile(device_ms, 0.50)},
                     {"p90_ms", percentile(device_ms, 0.90)},
                     {"min_ms", device_ms.front()}};
    fmt::print("{}\n", j.dump(2));
    return kExitOk;
  }
  fmt::print("{} on {} ({} threads), batch {}, {} inputs in {} memory{}: {} in {:.1f} ms\n",
             o.model, backend_name, threads, batch, inputs_from,
             memory == "backend" ? "the backend's" : memory,
             o.io == "device" ? ", outputs left on the device" : "",
             is_package ? "loaded" : "built", build_ms);
  fmt::print(
      "latency  p50 {:.3f} ms  p90 {:.3f} ms  p99 {:.3f} ms  (min {:.3f}, max {:.3f}; {} runs "
      "after {} warm-up)\n",
      p50, p90, p99, ms.front(), ms.back(), o.iters, o.warmup);
  if (!device_ms.empty())
    fmt::print(
        "device   p50 {:.3f} ms  p90 {:.3f} ms  (min {:.3f}; the device's own time, the input and "
        "output copies excluded)\n",
        percentile(device_ms, 0.50), percentile(device_ms, 0.90), device_ms.front());
  if (!copies.is_null())
    fmt::print(
        "host copies {} host->device ({} bytes), {} device->host ({} bytes) in the timed runs\n",
        copies["host_to_device"].get<uint64_t>(), copies["host_to_device_bytes"].get<uint64_t>(),
        copies["device_to_host"].get<uint64_t>(), copies["device_to_host_bytes"].get<uint64_t>());
  fmt::print("throughput {:.1f} samples/s\n", throughput);
  return kExitOk;
}

}  // namespace

void add_bench_command(CLI::App& root, std::vector<Command>& commands) {
  auto o = std::make_shared<BenchOptions>();
  CLI::App* sub = root.add_subcommand(
      "bench",
      "latency (p50/p90/p99) and throughput of a model on one backend, or of a .hone package");
  sub->footer(
      "Examples:\n"
      "  hone bench models/cnn.onnx --backend onednn --batch 8 --iters 200 --threads 1\n"
      "  hone bench cnn.hone --batch 8 --json\n"
      "  hone bench resnet50.hone --io device   # cuda: inputs and outputs stay on the GPU");
  sub->add_option("model", o->model, "the .onnx file, or a .hone package (runs its chosen backend)")
      ->required()
      ->type_name("MODEL.onnx|OUT.hone");
  sub->add_option("--backend", o->backend, "backend name (see `hone backends`)")
      ->capture_default_str();
  sub->add_option("--config", o->configs, "a backend config field for --backend (repeatable)")
      ->type_name("FIELD=VALUE");
  sub->add_option("--batch", o->batch, "value of every input's symbolic leading dim (default 1)");
  sub->add_option("--dim", o->dims, "value of another symbolic dim (repeatable)")
      ->type_name("NAME=VALUE");
  sub->add_option("--iters", o->iters, "timed runs")->capture_default_str();
  sub->add_option("--warmup", o->warmup, "untimed runs first")->capture_default_str();
  sub->add_option("--seed", o->seed, "seed of the random inputs")->capture_default_str();
  sub->add_option("--inputs", o->inputs_dir,
                  "inputs from DIR/input_<i>.npy or .pb instead of random")
      ->type_name("DIR");
  add_input_value_options(*sub, o->values);
  sub->add_flag("--json", o->json, "machine-readable output");
  sub->add_flag("--pageable-inputs", o->pageable,
                "keep the inputs in ordinary memory; by default they are allocated by the backend "
                "(page-locked memory on cuda, which its copies read directly)");
  sub->add_option("--io", o->io,
                  "host: inputs and outputs in host memory (infer); device: inputs copied to the "
                  "device once, each call reads them there and leaves its outputs there "
                  "(infer_on_device, synchronized per call; backends with a device only)")
      ->capture_default_str();
  commands.push_back({sub, [o] { return run_bench(*o); }});
}

}  // namespace hone::cli
