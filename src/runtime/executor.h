// runtime::Executor: runs a graph on one or more BlockCompilers (backends'
// compiling side) and the fallback interpreter. It owns execution; backends
// only propose and compile (STYLE.md rule 8).
//
//   runtime::Executor ex({&my_compiler});
//   ex.set_options({.partition = {.min_block_size = 5}, .optimize = true});
//   HONE_CHECK_OK(ex.build(graph));     // optimize, partition, compile, schedule the fallback
//   HONE_TRY(auto outs, ex.run(inputs)); // checks the inputs once, runs the stages in order
//
// build(): the graph passes run first (hone/optimize.h) unless `optimize` is
// off, or the caller handed over their result for this graph
// (ExecutorOptions::optimized: tune() makes it once for every candidate).
// The first compiler proposes for every node (supported, or why not);
// partition_graph groups the proposals into blocks under the partition
// options. Nodes that `placement` puts on another compiler (per-op kernel
// selection) are cut out of the first compiler's blocks and become blocks of
// their own on that compiler, so one executor holds blocks of several
// backends. Each compiled block is then asked again as the graph it will be
// compiled as: a node its compiler refuses there (a Reshape whose shape
// computation the cut left in the block before) runs on the fallback, with
// the reason, so any placement builds. Every other block runs on the
// fallback interpreter, whose node order and value lifetimes
// (eval::Schedule) are made once at build.
//
// Control flow: the bodies of an If, Loop or Scan node are built like graphs
// of their own (partitioned and compiled by the first compiler; the names a
// body captures become its inputs). When every body compiled with no
// fallback, the node is a control stage (Partition::controls): the executor
// runs it itself (eval::run_control_flow: the condition or trip count read on
// the host, the bodies' compiled programs run), and it is no fallback.
// Otherwise it runs on the fallback, which still runs the compiled bodies,
// and each node of a body that falls back counts as a fallback of the graph
// (Partition::body_fallbacks, named by path: "If_3/else_branch/NMS_7"); a body
// that cannot be built stays interpreted, every node of it a fallback, with
// the reason in the partition's notes. require_full_compilation refuses body
// fallbacks as it refuses the graph's own.
//
// run() checks the inputs against the graph once (dtypes, ranks, static
// dims); blocks get their tensors as they are.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "eval/interpreter.h"
#include "hone/optimize.h"
#include "hone/partition.h"
#include "runtime/block_compiler.h"

namespace hone::runtime {

struct ExecutorOptions {
  PartitionOptions partition;
  /// Run the graph passes before partitioning.
  bool optimize = true;
  /// The passes' result for the graph build() and plan() get, made once by
  /// the caller; used (when made from that graph) instead of running them.
  std::shared_ptr<const OptimizedGraph> optimized;
  /// Nodes of the top-level graph as planned (after the passes), by name,
  /// that run on another compiler than the first: name -> index into the
  /// compilers. A node that compiler refuses runs on the fallback, with its
  /// reason.
  std::map<std::string, size_t> placement;
};

class Executor {
 public:
  /// compilers[0] proposes for every node; the others run only what
  /// `placement` gives them. Not owned: they must outlive the executor.
  explicit Executor(std::vector<BlockCompiler*> compilers);
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  void set_options(ExecutorOptions options) { options_ = std::move(options); }
  const ExecutorOptions& options() const { return options_; }

  /// The graph the partition of `g` refers to: `g` itself with `optimize`
  /// off, else the optimized copy (shared or made here) and the passes' report.
  [[nodiscard]] Result<std::shared_ptr<const OptimizedGraph>> optimized(const Graph& g) const;
  /// How build() would split `g`, with reasons; builds nothing. The notes
  /// say what the passes did and how control-flow bodies would be split.
  [[nodiscard]] Result<Partition> plan(const Graph& g) const;
  /// Optimizes, partitions and compiles `g`. Runs once.
  [[nodiscard]] Result<void> build(const Graph& g);
  /// One inference; safe from several threads once built.
  [[nodiscard]] Result<std::vector<Tensor>> run(const std::vector<Tensor>& inputs) const;
  /// Checks `inputs` against the planned graph as run() does (dtypes, ranks,
  /// static dims; the error names the input and axis). Reads no data.
  [[nodiscard]] Result<void> check_inputs(const std::vector<Tensor>& inputs) const;
  /// The top-level graph as one compiled block, when it runs as one (a single
  /// stage, on a compiler): the block, the graph input each block input is,
  /// and the block output each graph output is. Null block otherwise (a
  /// fallback stage, several blocks, an output that is a constant or input).
  struct SoleBlock {
    const CompiledBlock* block = nullptr;
    std::vector<size_t> inputs;   // block input i is graph input inputs[i]
    std::vector<size_t> outputs;  // graph output o is block output outputs[o]
  };
  SoleBlock sole_block() const;
  /// The partition build() made; empty before.
  const Partition& partition() const;
  /// The graph build() partitioned (optimized or as given); null before.
  const Graph* planned_graph() const;

 private:
  struct Stage {
    Block block;
    Graph graph;                              // the standalone block
    std::unique_ptr<CompiledBlock> compiled;  // null: on the fallback, or block.control
    eval::Schedule schedule;                  // the fallback's, made once at build
  };
  /// A graph as this executor runs it: the top-level graph or a body.
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

  BlockCompiler& primary() const { return *compilers_.front(); }
  Result<Partition> plan_graph(const Graph& g, int depth, bool describe_bodies) const;
  Result<void> place(const Graph& g, Partition& p) const;
  Result<std::shared_ptr<GraphRun>> build_program(const Graph& g, int depth);
  Result<std::vector<Tensor>> run_program(const GraphRun& p, const std::vector<Tensor>& inputs,
                                          bool check) const;
  /// A control stage: its If, Loop or Scan run by eval::run_control_flow,
  /// its bodies' compiled programs by body_runner_.
  Result<std::vector<Tensor>> run_control(const Stage& st, const std::vector<Tensor>& inputs) const;

  std::vector<BlockCompiler*> compilers_;
  ExecutorOptions options_;
  std::shared_ptr<GraphRun> main_;
  std::map<const Graph*, Body> bodies_;  // keyed by the body as the node's attribute holds it
  std::unique_ptr<BodyRunner> body_runner_;
  eval::Interpreter fallback_;
};

}  // namespace hone::runtime
