// The blas backend: hone's own f32 CPU kernels around OpenBLAS SGEMM. Conv
// (im2col + SGEMM, a direct depthwise kernel), Gemm/MatMul with fused
// epilogues (bias, residual Add, activations; a following BatchNormalization
// folded into the Conv weights), fused element-wise chains, pools, Softmax,
// LayerNormalization, the Reduce* family and layout ops; everything else falls
// back to the reference through CompilingBackend.
//
//   auto be = std::make_unique<blas::BlasBackend>();
//   HONE_CHECK_OK(be->build(graph));
//   HONE_TRY(auto y, be->infer({x}));  be->kernel_executions();  // > 0: blas kernels ran
//
// Lifecycle per block: compile() creates one Op per fused unit (validates,
// packs weights once); each input-shape signature gets a plan (kernel
// choice, buffer offsets, workspace size), built at compile time for static
// blocks and on first use otherwise, cached under a mutex; lay_out()
// (backends/common/arena_layout.h) places every temporary and workspace in
// one arena per call, taken from a small pool of arenas, and run() binds it.
// Values with a zero dim (a detector's empty feature level) are plan-time
// values no kernel reads (backends/common/empty_values.h); a signature no
// plan fits (non-f32 inputs, a node with no rule for an empty input) runs on
// the reference and counts a fallback run.
// Threads: `threads` > 0 gives the backend a pool of that size; 0 uses
// hone::ThreadPool::global(). OpenBLAS itself stays single-threaded (see
// kernels/gemm.h). infer() is thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "backends/common/compiling_backend.h"
#include "hone/thread_pool.h"

namespace hone::blas {

/// Activation memory of the largest arena any block planned, over every
/// input-shape signature seen so far.
struct MemoryFigures {
  uint64_t peak_activation_bytes = 0;   // the arena one inference of that block takes
  uint64_t naive_activation_bytes = 0;  // one buffer per temporary and workspace instead
};

/// Counters shared by the backend and its blocks.
struct Stats {
  std::atomic<uint64_t> kernel_executions{0};
  std::atomic<uint64_t> fallback_runs{0};
  mutable std::mutex mu;
  std::vector<std::string>
      kernel_lines;  // "'conv1' (Conv)+Relu [conv2d.f32.blas.im2col +add,relu]"
  std::set<std::string> seen;
  MemoryFigures memory;  // under `mu`
};

class BlasBackend final : public CompilingBackend {
 public:
  BlasBackend();
  static const BackendCapabilities& caps();

  std::string_view name() const override { return "blas"; }
  const BackendCapabilities& capabilities() const override { return caps(); }

  /// Fused units run by this backend's kernels (one per unit per inference).
  uint64_t kernel_executions() const { return stats_->kernel_executions.load(); }
  /// Block runs that went to the reference because no plan fit the shapes.
  uint64_t fallback_runs() const { return stats_->fallback_runs.load(); }
  /// Peak activation bytes of the largest planned arena (0 before any
  /// plan; static blocks are planned at build). Thread-safe.
  MemoryFigures memory_figures() const;
  /// One line per distinct (unit, kernel) planned, in planning order, and one
  /// "peak_activation_bytes N for block 'B' [dims]: arena ... (naive ...)"
  /// line per planned block and signature.
  std::vector<std::string> describe_kernels() const override;

 protected:
  NodeSupport supports(const Graph& g, const Node& node) const override;
  Result<std::unique_ptr<CompiledBlock>> compile(const Graph& block) override;

 private:
  std::shared_ptr<Stats> stats_ = std::make_shared<Stats>();
  std::shared_ptr<ThreadPool> own_pool_;  // when `threads` > 0
};

/// The per-node answer behind BlasBackend::supports().
NodeSupport supports_node(const Graph& g, const Node& node);

}  // namespace hone::blas
