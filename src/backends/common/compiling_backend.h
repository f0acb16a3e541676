// CompilingBackend: the shared shape of every backend that compiles parts of
// a graph (onednn, blas, aot, ...). The subclass is a BlockCompiler: it says
// which nodes it can run and compiles blocks of them. The runtime's Executor
// (src/runtime/executor.h) does the rest: it runs the graph passes,
// partitions, runs the refused blocks on the fallback interpreter, builds
// control-flow bodies, checks the inputs and wires the blocks together.
//
//   class MyBackend : public CompilingBackend {
//     NodeSupport supports(const Graph&, const Node&) const override;
//     Result<std::unique_ptr<CompiledBlock>> compile(const Graph& block) override;
//   };
//
// Config fields it declares: min_block_size (5), require_full_compilation
// (false), optimize (true): run hone's graph
// passes (hone/optimize.h) first, so supports(), compile() and the partition
// all see the optimized graph. The partition then carries that graph and what
// the passes did (Partition::graph, Partition::notes). A graph the caller
// optimized already (Backend::share_optimized, as tune() does) is not
// optimized again.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "hone/backend.h"
#include "hone/partition.h"
#include "runtime/block_compiler.h"
#include "runtime/executor.h"

namespace hone {

class CompilingBackend : public Backend, public BlockCompiler {
 public:
  ~CompilingBackend() override;
  std::string_view name() const override = 0;
  /// The partition found by build(); empty before.
  const Partition& partition() const;
  /// Proposals for every node of `g`, with reasons, without building.
  std::vector<NodeSupport> propose(const Graph& g) const;
  /// The executor's partition of `g` under min_block_size and
  /// require_full_compilation, on the optimized graph when `optimize` is on;
  /// build() compiles exactly this. The notes also say how the bodies of
  /// control-flow nodes would be partitioned.
  Result<Partition> plan(const Graph& g) const override;

 protected:
  CompilingBackend();
  [[nodiscard]] NodeSupport supports(const Graph& g, const Node& node) const override = 0;
  [[nodiscard]] Result<std::unique_ptr<CompiledBlock>> compile(const Graph& block) override = 0;

  /// The compilers the executor may use: this backend first; a backend that
  /// places some nodes on others (per-op kernel selection) adds them.
  virtual std::vector<BlockCompiler*> compilers() { return {this}; }
  /// The executor's options from this backend's config and the shared
  /// optimized graph; a backend that places nodes elsewhere adds its
  /// placement (node name -> index into compilers()).
  [[nodiscard]] virtual Result<runtime::ExecutorOptions> executor_options(const Graph& g) const;
  /// The graph build() partitioned (optimized or as given); null before.
  const Graph* planned_graph() const;
  /// The executor build() made; null before.
  const runtime::Executor* executor() const { return executor_.get(); }

  Result<void> do_build(const Graph& graph) override;
  Result<std::vector<Tensor>> do_infer(const std::vector<Tensor>& inputs) const override;

 private:
  std::unique_ptr<runtime::Executor> executor_;
};

}  // namespace hone
