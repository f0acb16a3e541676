// The two things a backend gives the runtime (src/runtime/executor.h): a
// BlockCompiler says per node whether it can run it (and why not) and
// compiles a block of nodes, as a standalone graph, into a CompiledBlock.
//
//   class MyCompiler : public BlockCompiler {
//     std::string_view name() const override { return "mine"; }
//     NodeSupport supports(const Graph&, const Node& n) const override;
//     Result<std::unique_ptr<CompiledBlock>> compile(const Graph& block) override;
//   };
//
// It proposes; the Executor decides where each node runs (STYLE.md rule 8),
// and ends a block after a node whose output length only its run finds where
// the block's compiler says so (ends_block_after).
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "hone/error.h"
#include "hone/graph.h"
#include "hone/partition.h"
#include "hone/tensor.h"
#include "ops/run_length.h"

namespace hone {

/// One compiled block. run() must be safe to call from several threads.
class CompiledBlock {
 public:
  virtual ~CompiledBlock() = default;
  [[nodiscard]] virtual Result<std::vector<Tensor>> run(
      const std::vector<Tensor>& inputs) const = 0;
};

class BlockCompiler {
 public:
  virtual ~BlockCompiler() = default;
  /// The name the partition and its notes use ("onednn").
  virtual std::string_view name() const = 0;
  /// Whether this compiler can run `node` of `g`; the reason when not.
  [[nodiscard]] virtual NodeSupport supports(const Graph& g, const Node& node) const = 0;
  /// Compiles `block` (a standalone graph of nodes it said yes to).
  [[nodiscard]] virtual Result<std::unique_ptr<CompiledBlock>> compile(const Graph& block) = 0;
  /// Called before a control-flow body (as a standalone graph whose inputs
  /// are its formal inputs, then the names it captures) is partitioned and
  /// compiled; aot derives the bounds of the body's dims here.
  virtual void prepare_body(const Graph& body) { (void)body; }
  /// Whether `node` of block graph `g` must be the last of its block on this
  /// compiler: its output's dims are known only once it has run, and the
  /// blocks reading it are built for the dims it made. By default every node
  /// ops::length_known_after_run names (NonZero, NonMaxSuppression, a TopK of
  /// a run-time K, a Slice of a run-time length): code compiled for symbolic
  /// dims (aot) must. A compiler that plans each block per input signature,
  /// K and slice bounds computed on the host then, needs it only where the
  /// length is data.
  virtual bool ends_block_after(const Graph& g, const Node& node) const {
    return ops::length_known_after_run(g, node);
  }
};

}  // namespace hone
