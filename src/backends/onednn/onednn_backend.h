// The onednn backend: blocks of f32 Conv/Gemm/MatMul/LSTM/GRU/RNN/activation/
// binary/pooling/softmax/normalization/layout nodes run as oneDNN primitives,
// with post-op fusion (bias, activation, residual Add) and blocked layouts
// inside a block; integer shape arithmetic (Shape, Slice, Concat, ... of dims)
// is evaluated when a block's plan is built; everything else falls back to
// the reference through CompilingBackend. With precision=bf16 (declared only
// on a CPU with native bf16, cpu_has_bf16()), Conv/Gemm/MatMul read bf16
// source and weights and accumulate into f32 ("conv[bf16]" in describe_kernels()),
// but for the nodes named in fp32_nodes (mixed precision); block inputs and
// outputs stay f32 either way.
//
//   auto be = std::make_unique<onednn::OnednnBackend>();
//   HONE_CHECK_OK(be->build(graph));
//   HONE_TRY(auto y, be->infer({x}));  be->kernel_executions();  // > 0: oneDNN ran
//
// Shapes: a block whose inputs are all static gets its primitives at build
// time; a block with symbolic dims builds them on first use per input-shape
// signature (cached, under a mutex). A shape oneDNN cannot express for a
// block runs that block on the reference instead, and counts a fallback run.
// Threads: this libdnnl uses OpenMP; the OpenMP team size of the calling
// thread is set around every build and run to `threads`, or, when that is 0,
// to the global ThreadPool's size (as for every backend; the CLI's --threads). infer() is
// thread-safe: each call has its own stream, arena and scratchpad; primitives and packed weights
// are shared. This header does not include dnnl.hpp.
// Timed choices: where a plan picks between two forms of a node by timing
// them (a 3x3 conv by Winograd or directly, fused or unfused, a layout; the
// block's plan on oneDNN's pick or nChw16c), the choice is recorded in the
// config field `timed_choices` (timed_choices.h) as it is made, at build or
// at a new shape's first run; a build given entries replays them untimed, so
// a package builds the same kernels it was tuned with.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/common/compiling_backend.h"
#include "backends/onednn/timed_choices.h"

namespace hone::onednn {

/// Counters shared by the backend and its blocks.
struct Stats {
  std::atomic<uint64_t> primitive_executions{0};
  std::atomic<uint64_t> fallback_runs{0};
  std::atomic<int> openmp_threads{0};  // team size in force during the latest run
  mutable std::mutex mu;
  std::vector<std::string> plans;  // describe() of every plan built, in order
};

class OnednnBackend final : public CompilingBackend {
 public:
  OnednnBackend();
  static const BackendCapabilities& caps();

  std::string_view name() const override { return "onednn"; }
  const BackendCapabilities& capabilities() const override { return caps(); }

  /// oneDNN primitives executed by this backend's blocks (reorders included).
  uint64_t kernel_executions() const { return stats_->primitive_executions.load(); }
  /// Block runs that went to the reference because no plan fit the shapes.
  uint64_t fallback_runs() const { return stats_->fallback_runs.load(); }
  /// OpenMP team size oneDNN ran with in the latest infer (0 before the first).
  int openmp_threads() const { return stats_->openmp_threads.load(); }
  /// One line per plan built ("conv+eltwise, pooling, reorder"), in build order.
  std::vector<std::string> plan_descriptions() const;
  std::vector<std::string> describe_kernels() const override { return plan_descriptions(); }
  /// How the choices made by timing (timed_choices.h) were settled since
  /// build(): timed here, replayed from `timed_choices`, or recorded but not
  /// runnable on this machine (then timed). All zero before build().
  ChoiceCounts choice_counts() const;

 protected:
  NodeSupport supports(const Graph& g, const Node& node) const override;
  Result<std::unique_ptr<CompiledBlock>> compile(const Graph& block) override;
  bool ends_block_after(const Graph& g, const Node& node) const override;
  /// Reads `timed_choices` (kInvalidArgument naming the field and the entry
  /// when malformed) into this build's record, then builds.
  Result<void> do_build(const Graph& graph) override;

 private:
  std::shared_ptr<Stats> stats_ = std::make_shared<Stats>();
  std::shared_ptr<TimedChoices> choices_ = std::make_shared<TimedChoices>();
};

/// Whether this CPU runs oneDNN's native bf16 kernels (AVX-512 BF16 or
/// newer), asked of oneDNN once. Only then does caps() list bf16.
bool cpu_has_bf16();

/// The per-node answer behind OnednnBackend::supports().
NodeSupport supports_node(const Graph& g, const Node& node);

/// Behind OnednnBackend::ends_block_after: whether `node` of block graph `g`
/// ends its block on onednn. Only where its length is data (NonZero,
/// NonMaxSuppression, a Slice of starts, ends or steps read when it runs):
/// a TopK's K and a Slice's bounds computed from dims are evaluated when the
/// plan of each input signature is built, so their lengths are known then.
bool block_ends_after(const Graph& g, const Node& node);

}  // namespace hone::onednn
