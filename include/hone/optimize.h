// hone::optimize: the graph passes of hone/passes.h run as one pipeline, in a
// fixed order, round after round until a round changes nothing. Backends that
// compile graphs (CompilingBackend's `optimize` config field) build from its
// result; the report says what each pass did.
//
//   HONE_TRY(OptimizeReport r, hone::optimize(graph));   // graph is replaced
//   HONE_LOG_DEBUG("{}", r.describe());                  // "64 -> 31 nodes in 3 rounds: ..."
//   optimize(graph, {.disabled = {"fuse_gelu"}});
#pragma once

#include <cstddef>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "hone/graph.h"

namespace hone {

struct OptimizeOptions {
  /// Pass names (optimize_pass_names()) not to run; an unknown name is an error.
  std::set<std::string> disabled;
  /// Rounds at most; the pipeline usually settles in two or three.
  int max_rounds = 8;
  /// fold_constants leaves nodes whose outputs exceed this alone.
  size_t fold_max_bytes = size_t{16} << 20;
};

/// What one pass did over all rounds.
struct PassReport {
  std::string name;
  int applied = 0;        // constants folded, patterns rewritten, nodes removed (per the pass)
  int nodes_removed = 0;  // node count before minus after, summed over rounds
};

struct OptimizeReport {
  size_t nodes_before = 0;
  size_t nodes_after = 0;
  int rounds = 0;
  std::vector<PassReport> passes;  // pipeline order
  size_t elementwise_chains = 0;   // found in the result, for backends to fuse
  size_t attention_blocks = 0;
  /// "64 -> 31 nodes in 3 rounds: fold_constants 4 (-4), fuse_layer_norm 2 (-16), ...;
  /// 3 element-wise chains, 2 attention blocks"; passes that did nothing are left out.
  std::string describe() const;
};

/// The passes in the order each round runs them.
const std::vector<std::string>& optimize_pass_names();

/// Runs the pipeline on `g` and replaces it with the result. On error `g` is
/// left as it was; the error names the pass.
[[nodiscard]] Result<OptimizeReport> optimize(Graph& g, const OptimizeOptions& options = {});

/// optimize()'s result for one graph, made once and shared: tune() makes one
/// and hands it to every candidate (Backend::share_optimized), so the passes
/// run once per tune and every candidate starts from the same graph.
struct OptimizedGraph {
  std::shared_ptr<const Graph> graph;  // the optimized copy
  OptimizeReport report;
  /// The graph it was made from, by identity (not owned): a backend uses it
  /// only when build() is given that same graph object.
  const Graph* source = nullptr;
  size_t source_nodes = 0;
  size_t source_values = 0;
  /// Whether it was made from `g` (the same object, unchanged in size).
  bool made_from(const Graph& g) const {
    return source == &g && source_nodes == g.nodes().size() && source_values == g.values().size();
  }
};
/// Copies `g`, optimizes the copy and keeps the report.
[[nodiscard]] Result<std::shared_ptr<const OptimizedGraph>> optimize_shared(
    const Graph& g, const OptimizeOptions& options = {});

}  // namespace hone
