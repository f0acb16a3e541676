// CompilingBackend: the shared shape of every backend that compiles parts of
// a graph (onednn, blas, aot, ...). The subclass says which nodes it can run
// and compiles blocks of them; this class partitions the graph, runs the
// refused blocks on the fallback (the reference interpreter), and wires the
// blocks together at inference.
//
//   class MyBackend : public CompilingBackend {
//     NodeSupport supports(const Graph&, const Node&) const override;
//     Result<std::unique_ptr<CompiledBlock>> compile(const Graph& block) override;
//   };
//
// Config fields it declares: min_block_size (5), require_full_compilation
// (false), allow_reduced_precision (false), optimize (true): run hone's graph
// passes (hone/optimize.h) first, so supports(), compile() and the partition
// all see the optimized graph. The partition then carries that graph and what
// the passes did (Partition::graph, Partition::notes).
#pragma once

#include <memory>
#include <vector>

#include "eval/interpreter.h"
#include "hone/backend.h"
#include "hone/partition.h"

namespace hone {

/// One compiled block. run() must be safe to call from several threads.
class CompiledBlock {
 public:
  virtual ~CompiledBlock() = default;
  [[nodiscard]] virtual Result<std::vector<Tensor>> run(
      const std::vector<Tensor>& inputs) const = 0;
};

class CompilingBackend : public Backend {
 public:
  /// The partition found by build(); empty before.
  const Partition& partition() const { return partition_; }
  /// Proposals for every node of `g`, with reasons, without building.
  std::vector<NodeSupport> propose(const Graph& g) const;
  /// propose() grouped by partition_graph under min_block_size and
  /// require_full_compilation, on the optimized graph when `optimize` is on;
  /// build() compiles exactly this.
  Result<Partition> plan(const Graph& g) const override;

 protected:
  CompilingBackend();
  [[nodiscard]] virtual NodeSupport supports(const Graph& g, const Node& node) const = 0;
  [[nodiscard]] virtual Result<std::unique_ptr<CompiledBlock>> compile(const Graph& block) = 0;

  Result<void> do_build(const Graph& graph) override;
  Result<std::vector<Tensor>> do_infer(const std::vector<Tensor>& inputs) const override;

 private:
  struct Stage {
    Block block;
    Graph graph;                              // the standalone block
    std::unique_ptr<CompiledBlock> compiled;  // null: runs on the fallback
  };
  std::shared_ptr<const Graph> graph_;  // the graph the stages run: optimized or as given
  Partition partition_;
  std::vector<Stage> stages_;
  eval::Interpreter fallback_;
};

}  // namespace hone
