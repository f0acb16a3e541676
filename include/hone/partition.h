// Partitioning: a backend proposes the nodes it can run (with a reason for
// each it refuses); one partitioner groups them into blocks, and the rest
// falls back to another backend (the reference by default).
//
//   std::vector<NodeSupport> votes = backend.propose(graph);
//   HONE_TRY(Partition p, partition_graph(graph, votes, {.min_block_size = 5}));
//   for (const Block& b : p.blocks) { Graph sub = extract_block(graph, b); ... }
//
// Blocks are contiguous runs of one topological order, so running them in
// order is always valid: no block needs a value a later block makes.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "hone/graph.h"

namespace hone {

/// A backend's answer for one node: supported, or why not.
struct NodeSupport {
  bool supported = false;
  std::string reason;  // empty when supported
  static NodeSupport yes() { return {true, {}}; }
  static NodeSupport no(std::string why) { return {false, std::move(why)}; }
};

struct PartitionOptions {
  /// Supported islands with fewer nodes run on the fallback instead.
  int min_block_size = 5;
  /// When true, any node the backend refuses is an error naming it.
  bool require_full_compilation = false;
};

struct Block {
  bool on_backend = false;  // false: runs on the fallback (or, with `control`, the executor)
  /// A control-flow node (If, Loop, Scan) whose bodies all compiled with no
  /// fallback: the executor runs it itself, its bodies' compiled programs
  /// chosen by its inputs; on_backend is false. Always one node.
  bool control = false;
  /// Set when the executor placed this block on another backend than the
  /// one that planned (per-op kernel selection): that backend's name.
  std::string placed_on;
  std::vector<NodeId> nodes;       // in execution order
  std::vector<ValueId> inputs;     // values read but made elsewhere (graph inputs, other blocks)
  std::vector<ValueId> outputs;    // values later blocks or the graph's outputs need
  std::vector<ValueId> constants;  // initializers the block reads
};

struct Partition {
  std::vector<Block> blocks;
  /// Every refused node with the backend's reason; also those of islands
  /// that fell back for being smaller than min_block_size.
  std::vector<std::pair<NodeId, std::string>> fallbacks;
  /// A node inside a control-flow body that runs on the fallback: its path
  /// from the graph ("If_1795/else_branch/NonMaxSuppression_1813"), op and reason.
  struct BodyFallback {
    std::string path, op, reason;
  };
  /// The fallbacks of the bodies of this graph's control-flow nodes, at any depth.
  std::vector<BodyFallback> body_fallbacks;
  /// Control-flow nodes the executor runs (blocks with `control`), with what
  /// runs their bodies ("branches compiled on onednn"); not fallbacks.
  std::vector<std::pair<NodeId, std::string>> controls;
  /// The graph the node ids above refer to when the backend planned a
  /// rewritten copy of the graph it was given (CompilingBackend's `optimize`
  /// field); null when they refer to the given graph itself.
  std::shared_ptr<const Graph> graph;
  /// How `graph` came about ("optimize: 64 -> 31 nodes in 3 rounds: ..."); empty without one.
  std::string notes;
  size_t nodes_on_backend() const;
  /// The nodes that run on the fallback: `fallbacks` and `body_fallbacks`.
  size_t fallback_count() const { return fallbacks.size() + body_fallbacks.size(); }
  /// "3 blocks: backend[12 nodes] fallback[1 node] backend[7 nodes]", then
  /// fallback_summary(), one line per fallback node with its reason (body
  /// fallbacks by their path) and one per control node.
  /// `g` is the graph given to plan(); fallback names come from `graph` when set.
  std::string describe(const Graph& g) const;
  /// "fallbacks by op: Split x12, Where, GatherND x2" (most first); "" without any.
  std::string fallback_summary(const Graph& g) const;
};

/// `support` has one entry per node of `g` (same order as g.nodes()).
[[nodiscard]] Result<Partition> partition_graph(const Graph& g,
                                                const std::vector<NodeSupport>& support,
                                                const PartitionOptions& options);

/// Fills each block's inputs, outputs and constants from its nodes (which
/// must be in execution order, the blocks in running order), as
/// partition_graph does; for callers that regroup the blocks of a partition.
void fill_block_io(const Graph& g, std::vector<Block>& blocks);
/// A standalone graph for one block: its inputs become graph inputs, its
/// constants initializers, its outputs graph outputs; names are kept.
[[nodiscard]] Result<Graph> extract_block(const Graph& g, const Block& block);

}  // namespace hone
