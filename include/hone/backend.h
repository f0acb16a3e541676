// hone::Backend: something that turns a graph into something that runs.
//
//   HONE_TRY(auto be, hone::default_registry().create("reference"));
//   HONE_CHECK_OK(be->build(graph));            // created -> active
//   HONE_TRY(auto outs, be->infer({x}));        // thread-safe once built
//
// A backend describes itself with BackendCapabilities (data, not code) and
// counts the inferences its own kernels ran, so callers can prove which
// backend really did the work. Lifecycle: created -> built -> active <->
// inactive; build() runs at most once per object.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hone/backend_config.h"
#include "hone/dtype.h"
#include "hone/error.h"
#include "hone/graph.h"
#include "hone/partition.h"
#include "hone/tensor.h"

namespace hone {

enum class Device : uint8_t { kCpu, kCuda };
enum class BuildMode : uint8_t { kAheadOfTime, kJustInTime };
enum class BackendState : uint8_t { kCreated, kBuilt, kActive, kInactive, kLoaded };

std::string_view to_string(Device d);
std::string_view to_string(BuildMode m);
std::string_view to_string(BackendState s);

struct BackendCapabilities {
  std::vector<Device> devices;
  std::vector<DType> dtypes;
  std::vector<std::string> precisions;  // "f32", "bf16", ...
  BuildMode build_mode = BuildMode::kAheadOfTime;
  bool dynamic_shapes = false;
  bool has_artifact = false;
  std::string artifact_format;  // "onnx", "native-so"; empty without an artifact
};

class Backend {
 public:
  virtual ~Backend() = default;

  virtual std::string_view name() const = 0;
  virtual const BackendCapabilities& capabilities() const = 0;

  /// The backend's settings. Every backend has `threads` (0: the global pool).
  const BackendConfig& config() const { return config_; }
  /// Sets one field from text ("min_block_size", "3"); only before build().
  [[nodiscard]] Result<void> configure(const std::string& field, const std::string& value);

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

  [[nodiscard]] Result<void> activate();
  [[nodiscard]] Result<void> deactivate();
  BackendState state() const { return state_; }
  /// Inferences completed by this backend's own kernels.
  uint64_t executions() const { return executions_.load(std::memory_order_relaxed); }

 protected:
  Backend();
  /// For subclasses to declare their fields in their constructor.
  BackendConfig& mutable_config() { return config_; }
  [[nodiscard]] virtual Result<void> do_build(const Graph& graph) = 0;
  [[nodiscard]] virtual Result<std::vector<Tensor>> do_infer(const std::vector<Tensor>& inputs) const = 0;

 private:
  BackendConfig config_;
  BackendState state_ = BackendState::kCreated;
  mutable std::atomic<uint64_t> executions_{0};
};

}  // namespace hone
