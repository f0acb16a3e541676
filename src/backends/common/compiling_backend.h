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
// Control flow: an If, Loop or Scan node runs on the fallback, but its bodies
// are built like graphs of their own (partitioned and compiled by the same
// backend; the names a body captures become its inputs), and the fallback
// runs them compiled. A body that cannot be built stays interpreted, with the
// reason in the partition's notes.
//
// Config fields it declares: min_block_size (5), require_full_compilation
// (false), allow_reduced_precision (false), optimize (true): run hone's graph
// passes (hone/optimize.h) first, so supports(), compile() and the partition
// all see the optimized graph. The partition then carries that graph and what
// the passes did (Partition::graph, Partition::notes).
#pragma once

#include <map>
#include <memory>
#include <string>
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
  ~CompilingBackend() override;
  /// The partition found by build(); empty before.
  const Partition& partition() const;
  /// Proposals for every node of `g`, with reasons, without building.
  std::vector<NodeSupport> propose(const Graph& g) const;
  /// propose() grouped by partition_graph under min_block_size and
  /// require_full_compilation, on the optimized graph when `optimize` is on;
  /// build() compiles exactly this. The notes also say how the bodies of
  /// control-flow nodes would be partitioned.
  Result<Partition> plan(const Graph& g) const override;

 protected:
  CompilingBackend();
  [[nodiscard]] virtual NodeSupport supports(const Graph& g, const Node& node) const = 0;
  [[nodiscard]] virtual Result<std::unique_ptr<CompiledBlock>> compile(const Graph& block) = 0;
  /// Called before a control-flow body (as a standalone graph whose inputs
  /// are its formal inputs, then the names it captures) is partitioned and
  /// compiled; aot derives the bounds of the body's dims here.
  virtual void prepare_body(const Graph& body) { (void)body; }

  Result<void> do_build(const Graph& graph) override;
  Result<std::vector<Tensor>> do_infer(const std::vector<Tensor>& inputs) const override;

 private:
  struct Stage {
    Block block;
    Graph graph;                              // the standalone block
    std::unique_ptr<CompiledBlock> compiled;  // null: runs on the fallback
    eval::Schedule schedule;                  // the fallback's, made once at build
  };
  /// A graph as this backend runs it: the top-level graph or a body.
  struct GraphRun {
    std::shared_ptr<const Graph> graph;  // optimized or as given
    Partition partition;
    std::vector<Stage> stages;
  };
  /// A compiled body: its program takes the body's formal inputs, then `captures`.
  struct Body {
    std::shared_ptr<const GraphRun> program;
    size_t formal_inputs = 0;
    std::vector<std::string> captures;
  };
  class BodyRunner;

  Result<Partition> plan_graph(const Graph& g, int depth) const;
  Result<std::shared_ptr<GraphRun>> build_program(const Graph& g, int depth);
  Result<std::vector<Tensor>> run_program(const GraphRun& p, const std::vector<Tensor>& inputs,
                                          bool check) const;

  std::shared_ptr<GraphRun> main_;
  std::map<const Graph*, Body> bodies_;  // keyed by the body as the node's attribute holds it
  std::unique_ptr<BodyRunner> body_runner_;
  eval::Interpreter fallback_;
};

}  // namespace hone
