#include "hone/partition.h"

#include <algorithm>
#include <deque>
#include <map>
#include <set>

namespace hone {

size_t Partition::nodes_on_backend() const {
  size_t n = 0;
  for (const Block& b : blocks)
    if (b.on_backend) n += b.nodes.size();
  return n;
}

std::string Partition::describe(const Graph& g) const {
  std::string s = std::to_string(blocks.size()) + (blocks.size() == 1 ? " block:" : " blocks:");
  for (const Block& b : blocks) {
    s += b.control             ? " control["
         : !b.on_backend       ? " fallback["
         : b.placed_on.empty() ? " backend["
                               : " " + b.placed_on + "[";
    s += std::to_string(b.nodes.size()) + (b.nodes.size() == 1 ? " node]" : " nodes]");
  }
  // Node ids refer to the planned (rewritten) graph when the backend made one.
  const Graph& planned = graph ? *graph : g;
  if (fallback_count() > 0) s += "\n  " + fallback_summary(g);
  for (const auto& [node, why] : fallbacks)
    s += "\n  fallback " + planned.node(node).describe() + ": " + why;
  for (const BodyFallback& f : body_fallbacks)
    s += "\n  fallback '" + f.path + "' (" + f.op + "): " + f.reason;
  for (const auto& [node, how] : controls)
    s += "\n  control " + planned.node(node).describe() + ": " + how;
  return s;
}

std::string Partition::fallback_summary(const Graph& g) const {
  if (fallback_count() == 0) return "";
  const Graph& planned = graph ? *graph : g;
  std::map<std::string, int> count;
  for (const auto& [node, why] : fallbacks) ++count[planned.node(node).op_type];
  for (const BodyFallback& f : body_fallbacks) ++count[f.op];
  std::vector<std::pair<std::string, int>> ops(count.begin(), count.end());
  std::stable_sort(ops.begin(), ops.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string s = "fallbacks by op:";
  for (size_t i = 0; i < ops.size(); ++i)
    s += (i == 0 ? " " : ", ") + ops[i].first +
         (ops[i].second > 1 ? " x" + std::to_string(ops[i].second) : "");
  return s;
}

namespace {

// A topological order that stays on one side (supported / not) as long as it
// can, so same-side nodes form long runs.
std::vector<NodeId> grouped_order(const Graph& g, const std::vector<bool>& side) {
  const size_t n = g.nodes().size();
  std::vector<int> indegree(n, 0);
  std::vector<std::vector<NodeId>> consumers(n);
  for (size_t i = 0; i < n; ++i) {
    std::set<NodeId> deps;
    for (ValueId v : g.reads_of(static_cast<NodeId>(i)))
      if (g.value(v).producer >= 0 && deps.insert(g.value(v).producer).second) {
        consumers[g.value(v).producer].push_back(static_cast<NodeId>(i));
        ++indegree[i];
      }
  }
  std::set<NodeId> ready[2];
  for (size_t i = 0; i < n; ++i)
    if (indegree[i] == 0) ready[side[i]].insert(static_cast<NodeId>(i));
  std::vector<NodeId> order;
  int current = ready[1].empty() ? 0 : 1;
  while (!ready[0].empty() || !ready[1].empty()) {
    if (ready[current].empty()) current ^= 1;
    const NodeId id = *ready[current].begin();
    ready[current].erase(ready[current].begin());
    order.push_back(id);
    for (NodeId c : consumers[id])
      if (--indegree[c] == 0) ready[side[c]].insert(c);
  }
  return order;
}

void fill_io(const Graph& g, Block& b, const std::vector<int>& block_of, int index,
             const std::vector<std::set<int>>& reader_blocks,
             const std::set<ValueId>& graph_outputs) {
  std::set<ValueId> seen_in, seen_const;
  for (NodeId n : b.nodes)
    for (ValueId v : g.reads_of(n)) {
      const Value& val = g.value(v);
      if (val.initializer) {
        if (seen_const.insert(v).second) b.constants.push_back(v);
      } else if (val.producer < 0 || block_of[val.producer] != index) {
        if (seen_in.insert(v).second) b.inputs.push_back(v);
      }
    }
  for (NodeId n : b.nodes)
    for (ValueId v : g.node(n).outputs) {
      if (v == kNoValue || g.value(v).name.empty()) continue;
      const auto& readers = reader_blocks[v];
      const bool read_elsewhere =
          readers.size() > 1 || (readers.size() == 1 && !readers.count(index));
      if (read_elsewhere || graph_outputs.count(v)) b.outputs.push_back(v);
    }
}

}  // namespace

Result<Partition> partition_graph(const Graph& g, const std::vector<NodeSupport>& support,
                                  const PartitionOptions& options) {
  const size_t n = g.nodes().size();
  if (support.size() != n)
    return fail(ErrorCode::kInternal, "partition: " + std::to_string(support.size()) +
                                          " proposals for " + std::to_string(n) + " nodes");
  Partition p;
  std::vector<bool> side(n);
  for (size_t i = 0; i < n; ++i) {
    side[i] = support[i].supported;
    if (!side[i]) {
      if (options.require_full_compilation)
        return fail(ErrorCode::kUnsupported,
                    "require_full_compilation is set, but node " +
                        g.node(static_cast<NodeId>(i)).describe() +
                        " cannot run on this backend: " + support[i].reason);
      p.fallbacks.emplace_back(static_cast<NodeId>(i), support[i].reason);
    }
  }
  HONE_CHECK_OK(g.topological_order());  // reject cycles with the graph's own message
  const std::vector<NodeId> order = grouped_order(g, side);

  // Runs of one side; then supported runs below min_block_size fall back,
  // and neighbouring runs of the same side merge.
  std::vector<Block> runs;
  for (NodeId id : order) {
    if (runs.empty() || runs.back().on_backend != side[id]) {
      Block b;
      b.on_backend = side[id];
      runs.push_back(std::move(b));
    }
    runs.back().nodes.push_back(id);
  }
  for (Block& r : runs)
    if (r.on_backend && static_cast<int>(r.nodes.size()) < options.min_block_size) {
      if (options.require_full_compilation) continue;  // every node is supported: keep it
      r.on_backend = false;
      for (NodeId id : r.nodes)
        p.fallbacks.emplace_back(id, "in a block of " + std::to_string(r.nodes.size()) +
                                         " supported nodes, fewer than min_block_size " +
                                         std::to_string(options.min_block_size));
    }
  for (Block& r : runs) {
    if (!p.blocks.empty() && p.blocks.back().on_backend == r.on_backend) {
      auto& dst = p.blocks.back().nodes;
      dst.insert(dst.end(), r.nodes.begin(), r.nodes.end());
    } else {
      p.blocks.push_back(std::move(r));
    }
  }
  fill_block_io(g, p.blocks);
  return p;
}

void fill_block_io(const Graph& g, std::vector<Block>& blocks) {
  const size_t n = g.nodes().size();
  std::vector<int> block_of(n, -1);
  for (size_t b = 0; b < blocks.size(); ++b) {
    blocks[b].inputs.clear();
    blocks[b].outputs.clear();
    blocks[b].constants.clear();
    for (NodeId id : blocks[b].nodes) block_of[id] = static_cast<int>(b);
  }
  std::vector<std::set<int>> reader_blocks(g.values().size());
  for (size_t i = 0; i < n; ++i)
    for (ValueId v : g.reads_of(static_cast<NodeId>(i))) reader_blocks[v].insert(block_of[i]);
  const std::set<ValueId> graph_outputs(g.outputs().begin(), g.outputs().end());
  for (size_t b = 0; b < blocks.size(); ++b)
    fill_io(g, blocks[b], block_of, static_cast<int>(b), reader_blocks, graph_outputs);
}

Result<Graph> extract_block(const Graph& g, const Block& block) {
  Graph sub(g.name() + "_block");
  sub.opsets() = g.opsets();
  std::vector<ValueId> remap(g.values().size(), kNoValue);
  auto copy_value = [&](ValueId v) {
    if (remap[v] != kNoValue) return remap[v];
    Value copy = g.value(v);
    copy.producer = -1;
    remap[v] = sub.add_value(std::move(copy));
    return remap[v];
  };
  std::vector<ValueId> inputs;
  for (ValueId v : block.inputs) inputs.push_back(copy_value(v));
  sub.set_inputs(inputs);
  for (ValueId v : block.constants) copy_value(v);
  for (NodeId id : block.nodes) {
    Node node = g.node(id);
    for (ValueId& v : node.inputs)
      if (v != kNoValue) v = copy_value(v);
    for (ValueId& v : node.outputs)
      if (v != kNoValue) v = copy_value(v);
    sub.add_node_with_outputs(std::move(node));
  }
  std::vector<ValueId> outputs;
  for (ValueId v : block.outputs) outputs.push_back(copy_value(v));
  sub.set_outputs(outputs);
  // Values captured from an enclosing graph (when g is itself a subgraph) stay captured.
  std::vector<std::string> outer;
  for (ValueId v : g.captured_values()) outer.push_back(g.value(v).name);
  HONE_CHECK_OK_CTX(sub.validate(outer), "while extracting a block of graph '" + g.name() + "'");
  return sub;
}

}  // namespace hone
