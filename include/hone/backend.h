// hone::Backend: something that turns a graph into something that runs.
//
//   HONE_TRY(auto be, hone::default_registry().create("reference"));
//   HONE_CHECK_OK(be->build(graph));            // created -> active
//   HONE_TRY(auto outs, be->infer({x}));        // thread-safe once built
//
// A backend describes itself with BackendCapabilities (data, not code) and
// counts the inferences its own kernels ran, so callers can prove which
// backend really did the work. Lifecycle: created -> built -> active <->
// inactive; build() runs at most once per object. A built backend can save()
// what it made into a folder; a fresh object load()s it (created -> loaded),
// then activate()s it, without building again:
//
//   HONE_CHECK_OK(be->save(dir));                     // a package keeps dir
//   HONE_CHECK_OK(fresh->load(graph, dir));  HONE_CHECK_OK(fresh->activate());
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hone/backend_config.h"
#include "hone/device_tensor.h"
#include "hone/dtype.h"
#include "hone/error.h"
#include "hone/graph.h"
#include "hone/partition.h"
#include "hone/precision.h"
#include "hone/tensor.h"

namespace hone {

struct OptimizedGraph;  // hone/optimize.h

enum class Device : uint8_t { kCpu, kCuda };
enum class BuildMode : uint8_t { kAheadOfTime, kJustInTime };
enum class BackendState : uint8_t { kCreated, kBuilt, kActive, kInactive, kLoaded };

std::string_view to_string(Device d);
std::string_view to_string(BuildMode m);
std::string_view to_string(BackendState s);

struct BackendCapabilities {
  std::vector<Device> devices;
  std::vector<DType> dtypes;
  /// The precisions it computes f32 models in on this machine, fp32 first;
  /// asked for through the `precision` config field.
  std::vector<Precision> precisions;
  /// Precisions that depend on the machine, each with what it needs
  /// (bf16 -> "a CPU with AVX-512 BF16"); in `precisions` only where this
  /// machine has it, so a user learns why one is missing.
  std::map<Precision, std::string> precision_needs;
  /// Of those this machine lacks, what it has instead, when the backend can
  /// tell ("NVIDIA A100 (sm_80): compute capability 8.0"): added to the
  /// error that refuses the precision. Machine-dependent, so never part of a
  /// backend's description page.
  std::map<Precision, std::string> precision_why_not;
  /// Honours the `fp32_nodes` config field: under a reduced precision, the
  /// nodes named there compute in fp32 (mixed precision, as tune's bisection
  /// builds it).
  bool mixed_precision = false;
  BuildMode build_mode = BuildMode::kAheadOfTime;
  bool dynamic_shapes = false;
  bool has_artifact = false;
  std::string artifact_format;  // "onnx", "native-so"; empty without an artifact
  /// The third-party libraries its results and saved state depend on, name →
  /// version ("onednn" → "2.6.3"); the environment fingerprint records them.
  std::map<std::string, std::string> libraries;
};

class Backend {
 public:
  virtual ~Backend() = default;

  virtual std::string_view name() const = 0;
  virtual const BackendCapabilities& capabilities() const = 0;

  /// The backend's settings. Every backend has `threads` (0: the global pool).
  const BackendConfig& config() const { return config_; }
  /// Sets one field from text ("min_block_size", "3"); only before build().
  /// `precision` is parsed (hone/precision.h spellings) and must be one of
  /// capabilities().precisions: kUnsupportedHardware with the reason when this
  /// machine lacks it, kUnsupported when the backend has no such kernels.
  [[nodiscard]] Result<void> configure(const std::string& field, const std::string& value);
  /// The precision it computes in: the `precision` field every backend has
  /// (fp32 unless configured).
  Precision precision() const;
  [[nodiscard]] Result<void> set_precision(Precision p);
  /// The nodes kept in fp32 under a reduced precision (the `fp32_nodes`
  /// field, comma-separated names); empty by default.
  std::vector<std::string> fp32_nodes() const;
  /// Sets `fp32_nodes`; kUnsupported on a backend without mixed_precision,
  /// kInvalidArgument for a name holding a comma.
  [[nodiscard]] Result<void> set_fp32_nodes(const std::vector<std::string>& nodes);

  /// Before build(): the graph passes' result for the graph build() will be
  /// given, made once by the caller (tune() shares one among its candidates).
  /// A backend that runs the passes (CompilingBackend's `optimize` field)
  /// starts from it instead of running them again; others ignore it.
  void share_optimized(std::shared_ptr<const OptimizedGraph> optimized);
  /// Prepares `graph` to run. The backend keeps its own copy of what it
  /// needs. Fails with kFailedPrecondition when called twice, kUnsupported
  /// naming the first node it cannot run.
  [[nodiscard]] Result<void> build(const Graph& graph);
  /// How build() would split `graph`: the blocks this backend runs and the
  /// nodes it leaves to the fallback, each with its reason, under the current
  /// config. Builds nothing; `hone inspect --backend` prints it. The default
  /// is one block holding every node (a backend that runs whole graphs).
  [[nodiscard]] virtual Result<Partition> plan(const Graph& graph) const;
  /// Runs one inference; safe to call from several threads at once on an
  /// active backend. Inputs are checked against the graph's declared dtypes
  /// and shapes; the error names the input and axis.
  [[nodiscard]] Result<std::vector<Tensor>> infer(const std::vector<Tensor>& inputs) const;

  /// Device-resident inference: `inputs` already in the device's memory (in
  /// graph order; each checked for its device, dtype and shape, the error
  /// naming the input and axis), outputs left there, on `call.stream`
  /// (hone/device_tensor.h says how the stream is respected). Returns the
  /// outputs in graph order: `call.outputs` when given, else tensors that own
  /// memory the backend allocated. Thread-safe like infer(). Backends that
  /// run on the host answer kUnsupported naming themselves; the cuda backend
  /// runs a graph that is one cuda block with no host copy, and stages any
  /// other graph (nodes on the reference) through host memory, each copy
  /// counted in transfers().
  [[nodiscard]] Result<std::vector<DeviceTensor>> infer_on_device(
      const std::vector<DeviceTensor>& inputs, const DeviceCall& call = {}) const;
  /// A copy of a host tensor in new device memory the result owns (for
  /// callers that have no CUDA of their own: tests, `hone bench --io
  /// device`); not counted in transfers(). kUnsupported on host backends.
  [[nodiscard]] virtual Result<DeviceTensor> to_device(const Tensor& t) const;
  /// A host copy of a device tensor, made on the legacy default stream (so
  /// after an infer_on_device() on that stream); not counted in transfers().
  /// kUnsupported on host backends.
  [[nodiscard]] virtual Result<Tensor> to_host(const DeviceTensor& t) const;
  /// The host/device copies this backend made for inputs and outputs since it
  /// was built; nothing for backends that run on the host.
  virtual std::optional<TransferCounts> transfers() const { return std::nullopt; }

  /// Writes what this built (active or inactive) backend made and needs to
  /// come back without building again (compiled libraries, kernel plans) into
  /// `dir`, which exists and is empty. The graph and config are not part of
  /// it: whoever saves (a package) keeps those and hands them to load().
  [[nodiscard]] Result<void> save(const std::filesystem::path& dir) const;
  /// created -> loaded: restores the state save() wrote to `dir` for
  /// `graph` (the graph build() was given) under the current config. The
  /// backend checks that what it finds fits; kCorrupt when not. Then activate().
  [[nodiscard]] Result<void> load(const Graph& graph, const std::filesystem::path& dir);
  /// Each field of config() that records choices made by timing
  /// (BackendConfig::declare_record()), name -> value as it stands now:
  /// config()'s, with what was timed since the tune at a new shape's first
  /// run; a backend whose parts keep records of their own (select's
  /// sub-backends) merges theirs in. A package saves these values, so a load
  /// replays them untimed. Not safe while another thread's infer() plans a
  /// new shape.
  virtual std::vector<std::pair<std::string, std::string>> choice_records() const;
  /// What this built backend chose to run each part of the graph with, one
  /// line per block or kernel ("conv+eltwise [conv2d.f32.onednn]"), for
  /// reports and package manifests (their field `kernel_plan`). Empty for a
  /// backend with no choices.
  virtual std::vector<std::string> describe_kernels() const { return {}; }
  /// Writes this built backend's deployable artifact (capabilities().
  /// artifact_format, e.g. "native-so") into `dir`, which exists and is
  /// empty; it must run without hone. kUnsupported for backends without a
  /// native artifact (the "onnx" artifact is written by hone's exporter from
  /// the graph, not by the backend).
  [[nodiscard]] virtual Result<void> export_artifact(const std::filesystem::path& dir) const;

  [[nodiscard]] Result<void> activate();
  [[nodiscard]] Result<void> deactivate();
  BackendState state() const { return state_; }
  /// Inferences completed by this backend's own kernels.
  uint64_t executions() const { return executions_.load(std::memory_order_relaxed); }
  /// For a backend that runs on an accelerator: nanoseconds its device has
  /// spent on this backend's work, summed over every inference so far,
  /// measured on the device (the copies of inputs and outputs between host
  /// and device excluded, as trtexec's "GPU Compute Time"). Nothing for
  /// backends that run on the host.
  virtual std::optional<uint64_t> device_nanoseconds() const { return std::nullopt; }
  /// Zero-filled host memory for a tensor this backend reads as an input:
  /// the memory it copies from fastest. The cuda backend gives page-locked
  /// memory, which the GPU's copy engines read directly (on the H200, 54 GB/s
  /// against 17 GB/s from ordinary memory); other backends, and cuda where
  /// no GPU is, give Tensor::allocate()'s. Any tensor can still be passed.
  [[nodiscard]] virtual Result<Tensor> allocate_host(DType dtype,
                                                     std::vector<int64_t> shape) const {
    return Tensor::allocate(dtype, std::move(shape));
  }

 protected:
  Backend();
  /// What share_optimized() was given; null when nothing was.
  const std::shared_ptr<const OptimizedGraph>& shared_optimized() const { return optimized_; }
  /// For subclasses to declare their fields in their constructor.
  BackendConfig& mutable_config() { return config_; }
  [[nodiscard]] virtual Result<void> do_build(const Graph& graph) = 0;
  [[nodiscard]] virtual Result<std::vector<Tensor>> do_infer(
      const std::vector<Tensor>& inputs) const = 0;
  /// Default: kUnsupported, "backend 'NAME' runs on the host ...".
  [[nodiscard]] virtual Result<std::vector<DeviceTensor>> do_infer_on_device(
      const std::vector<DeviceTensor>& inputs, const DeviceCall& call) const;
  /// Default: nothing to write (the backend rebuilds cheaply from the graph).
  [[nodiscard]] virtual Result<void> do_save(const std::filesystem::path& dir) const;
  /// Default: do_build(graph), for backends whose build is their load.
  [[nodiscard]] virtual Result<void> do_load(const Graph& graph, const std::filesystem::path& dir);

 private:
  [[nodiscard]] Result<void> check_threads() const;

  BackendConfig config_;
  std::shared_ptr<const OptimizedGraph> optimized_;
  BackendState state_ = BackendState::kCreated;
  mutable std::atomic<uint64_t> executions_{0};
};

}  // namespace hone
