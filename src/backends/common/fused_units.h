// Fused units of a compiled block: nodes merged into one op (a Conv with its
// element-wise epilogue, a chain of element-wise ops), with the values the
// unit reads and writes, placed so each runs after everything it reads.
//
//   using Unit = FusedUnit<Op>;
//   HONE_TRY(std::vector<Unit> units, place_units<Unit>(block, [&](NodeId id, const Node& n,
//            std::vector<NodeId>* absorbed) { return create_unit(info, n, absorbed); }));
//   for (const Unit& u : units) HONE_CHECK_OK(plan_unit_step(step, u, slot_for, slots, env));
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "hone/error.h"
#include "hone/graph.h"

namespace hone {

/// Who reads what inside one block graph, shared by the backends' BlockInfo.
struct BlockReaders {
  const Graph& g;
  std::vector<int> consumers;    // per value: reading nodes
  std::vector<NodeId> consumer;  // per value: the last reading node
  std::vector<bool> is_output;   // per value: a block output
  std::vector<bool> used;        // per node: already part of a unit
  /// `distinct`: a node that reads a value in two slots counts as one reader
  /// (cuda fuses through such a node); otherwise as two (blas).
  BlockReaders(const Graph& graph, bool distinct)
      : g(graph),
        consumers(graph.values().size(), 0),
        consumer(graph.values().size(), -1),
        is_output(graph.values().size(), false),
        used(graph.nodes().size(), false) {
    for (size_t i = 0; i < graph.nodes().size(); ++i) {
      const std::vector<ValueId>& in = graph.nodes()[i].inputs;
      for (size_t k = 0; k < in.size(); ++k) {
        const ValueId v = in[k];
        if (v < 0 || (distinct && std::find(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(k),
                                            v) != in.begin() + static_cast<std::ptrdiff_t>(k)))
          continue;
        ++consumers[static_cast<size_t>(v)];
        consumer[static_cast<size_t>(v)] = static_cast<NodeId>(i);
      }
    }
    for (ValueId v : graph.outputs()) is_output[static_cast<size_t>(v)] = true;
  }
};

/// A unit: nodes fused into one `Op`, with the values it reads and writes.
template <class Op>
struct FusedUnit {
  std::string label;            // "'conv1' (Conv) +BatchNormalization+Relu"
  std::vector<ValueId> inputs;  // f32 values read at run time (constants included)
  std::vector<ValueId> outputs;
  std::unique_ptr<Op> op;
  std::vector<NodeId> nodes;  // the nodes fused, in topological order (place_units)
};

/// Creates a unit for each node of `g` in topological order that no earlier
/// unit absorbed, with `create(id, node, &absorbed)` -> Result<Unit>, which
/// lists the further nodes it fused. A unit runs at the position of its last
/// node, so everything it reads is made by then. A failure names the node.
template <class Unit, class Create>
[[nodiscard]] Result<std::vector<Unit>> place_units(const Graph& g, Create&& create) {
  HONE_TRY(std::vector<NodeId> order, g.topological_order());
  std::vector<size_t> pos(g.nodes().size());
  for (size_t i = 0; i < order.size(); ++i) pos[static_cast<size_t>(order[i])] = i;
  std::vector<bool> done(g.nodes().size(), false);
  std::vector<std::pair<size_t, Unit>> placed;
  for (NodeId id : order) {
    if (done[static_cast<size_t>(id)]) continue;
    const Node& n = g.node(id);
    std::vector<NodeId> absorbed;
    Result<Unit> u = create(id, n, &absorbed);
    if (!u) return fail(std::move(u).error().add_context("while creating node " + n.describe()));
    size_t at = pos[static_cast<size_t>(id)];
    for (NodeId a : absorbed) {
      done[static_cast<size_t>(a)] = true;
      at = std::max(at, pos[static_cast<size_t>(a)]);
    }
    u->nodes = {id};
    u->nodes.insert(u->nodes.end(), absorbed.begin(), absorbed.end());
    std::sort(u->nodes.begin(), u->nodes.end(), [&](NodeId x, NodeId y) {
      return pos[static_cast<size_t>(x)] < pos[static_cast<size_t>(y)];
    });
    placed.emplace_back(at, std::move(*u));
  }
  std::stable_sort(placed.begin(), placed.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Unit> units;
  units.reserve(placed.size());
  for (auto& [at, u] : placed) units.push_back(std::move(u));
  return units;
}

/// Plans unit `u` as one step of a compiled block: `slot_for(v)` ->
/// Result<size_t> gives the slot of each input (making it on first use),
/// whose dims are `slots[slot].dims`; the slots go to `step.in` and the op's
/// plan for those dims (`env`: what its plan() takes besides them) to
/// `step.op`. A failure names the unit.
template <class Step, class Unit, class SlotFor, class Slots, class Env>
[[nodiscard]] Result<void> plan_unit_step(Step& step, const Unit& u, SlotFor&& slot_for,
                                          const Slots& slots, Env& env) {
  std::vector<std::decay_t<decltype(slots.front().dims)>> dims;
  for (ValueId v : u.inputs) {
    HONE_TRY(size_t s, slot_for(v));
    step.in.push_back(s);
    dims.push_back(slots[s].dims);
  }
  auto op = u.op->plan(dims, env);
  if (!op) return fail(std::move(op).error().add_context("while planning " + u.label));
  step.op = std::move(*op);
  return {};
}

}  // namespace hone
