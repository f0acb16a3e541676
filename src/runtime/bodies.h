// Control-flow bodies as the Executor builds them (runtime/executor.h): each
// body of an If, Loop or Scan as a graph of its own, and the accounting that
// makes its node a control stage (every body compiled, no fallback) or a
// fallback whose bodies' fallbacks count as the graph's, named by path.
//
//   // plan or build each body of the partition's fallback nodes, then account for them
//   HONE_CHECK_OK(settle_bodies(g, depth, "onednn", full, [&](auto& body, StandaloneBody& sb)
//                               { return plan_or_build(sb.graph); }, partition));
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hone/error.h"
#include "hone/graph.h"
#include "hone/partition.h"

namespace hone::runtime {

/// Every subgraph attribute of `n` with its attribute name ("then_branch", "body").
std::vector<std::pair<std::string, std::shared_ptr<const Graph>>> bodies_of(const Node& n);

/// A body as a graph of its own, and the names it captures (in input order).
struct StandaloneBody {
  Graph graph;
  std::vector<std::string> captures;
};

/// `body` (held by a node of `outer`, at body depth `depth`) as a graph of
/// its own: its formal inputs first, then every name it reads from enclosing
/// scopes (its own captures and those of the bodies inside it), typed from
/// `outer`; captured constants become its own initializers. kUnsupported
/// when it sits too deep, or a value it takes or returns is not a typed
/// tensor (sequences, optionals).
[[nodiscard]] Result<StandaloneBody> body_at(const Graph& body, const Graph& outer, int depth);

/// One line of the partition notes for body `attr` of `n`: how `plan`
/// partitioned it (`given` is the standalone body it planned, `plan` null
/// when it stays interpreted because of `why_not`), then its own notes.
std::string body_note(std::string_view backend, const Node& n, const std::string& attr, int depth,
                      const Partition* plan, const Graph& given, const std::string& why_not);

/// Appends every node of `body` and of the bodies inside it to `out`, each
/// a fallback for `why`, named by its path under `prefix`.
void interpreted_nodes(const Graph& body, const std::string& prefix, const std::string& why,
                       std::vector<Partition::BodyFallback>& out);

/// The fallbacks of a body partitioned as `bp` (its node ids refer to `bg`),
/// its own and its bodies', by their paths in it.
std::vector<Partition::BodyFallback> fallbacks_of(const Partition& bp, const Graph& bg);

/// How one body of a control-flow node came out: built (or planned) with
/// these fallbacks, or interpreted whole (then every node of it is one).
struct BodyOutcome {
  std::string attr;
  std::vector<Partition::BodyFallback> fallbacks;
};

/// Accounts for node `id` of `g`, which runs on the fallback and holds
/// bodies that came out as `bodies` (compiled on `backend`). An If, Loop or
/// Scan whose bodies all compiled with no fallback (their own or nested)
/// becomes a control node of `p` (Partition::controls), not a fallback.
/// Otherwise the bodies' fallbacks join p.body_fallbacks under their paths
/// ("If_3/else_branch/NonMaxSuppression_7"), and the node stays a fallback,
/// saying why.
void account_bodies(const Graph& g, NodeId id, const std::vector<BodyOutcome>& bodies,
                    std::string_view backend, Partition& p);

/// Gives each control node of `p` a block of its own (Block::control), cut
/// out of its fallback block.
void split_controls(const Graph& g, Partition& p);

/// The nodes of `p`'s fallback blocks that hold bodies, in running order.
std::vector<NodeId> body_holders(const Graph& g, const Partition& p);

/// What settle_bodies does with one body: plans or builds `sb` (the
/// standalone form of `body`, which it may prepare first) and returns its
/// partition, kept alive by the pointer; an error keeps the body interpreted.
using BodyVisitor = std::function<Result<std::shared_ptr<const Partition>>(
    const std::shared_ptr<const Graph>& body, StandaloneBody& sb)>;

/// The one walk over control-flow bodies that planning and building share:
/// every body of each node of `p`'s fallback blocks (body_holders, in `g`,
/// at body depth `depth`) goes through `visit`; each adds its line to
/// p.notes (body_note) and its node is accounted for (account_bodies), then
/// control nodes get blocks of their own (split_controls) and, when `full`,
/// require_full_compilation is checked (check_full, its error returned).
[[nodiscard]] Result<void> settle_bodies(const Graph& g, int depth, std::string_view backend,
                                         bool full, const BodyVisitor& visit, Partition& p);

/// require_full_compilation's refusal of node `node` (described) for `why`.
Error not_full(const std::string& node, const std::string& why);
/// require_full_compilation: no node of `p` runs on the fallback, in a body or
/// not; the error names a body's fallback first (its node falls back for it).
[[nodiscard]] Result<void> check_full(const Graph& g, const Partition& p);

}  // namespace hone::runtime
