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
// It proposes; the Executor decides where each node runs (STYLE.md rule 8).
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "hone/error.h"
#include "hone/graph.h"
#include "hone/partition.h"
#include "hone/tensor.h"

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
};

}  // namespace hone
