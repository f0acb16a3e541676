// Private to the aot backend: host nodes (common/host_eval.h) in an aot
// block. aot compiles a block once for symbolic dims, so the values exporters
// compute from dims (a causal mask from Range and Greater, T5's relative
// position buckets, a position embedding gathered by Range) cannot be
// constants of its code. They are values of each input-shape signature
// instead: cut_host_nodes() takes the host nodes out of the block, and every
// host value an aot node reads becomes an extra input of the generated
// code (a bool mask as 0 and 1), with the dims shape inference gave it. When
// the block runs, HostBlock evaluates the host nodes for the inputs' dims
// (on the reference, through host_eval, once per signature and cached) and
// hands their values to the compiled code with the block's own inputs.
//
//   HONE_TRY(auto cut, cut_host_nodes(block));          // nullopt: no host node
//   auto inner = compile(cut->graph);                   // the aot block of the rest
//   HONE_TRY(auto b, make_host_block(block, std::move(*cut), std::move(inner), &program));
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "backends/aot/program.h"
#include "backends/common/host_eval.h"
#include "runtime/block_compiler.h"

namespace hone::aot {

/// What aot evaluates when a block runs (common/host_eval.h): shape
/// arithmetic, masks, scales and tables computed from dims. support.cpp
/// decides with it, cut_host_nodes() cuts with it.
inline constexpr host_eval::Policy kHostPolicy = host_eval::Policy::kAnyDtype;

/// The input slots aot code reads at run time though they are not f32 (it
/// reads them as floats): a Where's condition.
inline bool reads_as_data(const Node& n, size_t slot) {
  return n.op_type == "Where" && slot == 0;
}

struct HostCut {
  /// Block inputs (by value id) whose values the host nodes read: integer
  /// and bool values another block computed from dims (host_eval::known_inputs).
  host_eval::Known known;
  /// The block without its host nodes, value ids unchanged: its inputs are
  /// the block inputs an aot node reads (a bool condition as f32), then the
  /// host values aot nodes read (their own types). Empty of nodes when the block is host
  /// nodes only.
  Graph graph;
  std::vector<NodeId> host_nodes;    // of the block, in topological order
  std::vector<size_t> real_inputs;   // block input index of each of the cut's first inputs
  std::vector<ValueId> host_inputs;  // the host values after them, in order
};

/// Names of the integer and bool values of `graph` not computed from dims
/// (token ids, masks, TopK's indices): a block reading one reads it as data.
std::set<std::string> run_time_values(const Graph& graph);

/// run_time_values() of every graph a backend plans: the one it is built
/// from and the passes' result, whose blocks it compiles (their values may
/// be new). Thread-safe; each graph is read once.
class RunTimeValues {
 public:
  void reset(const Graph& g);
  void add(const Graph& g);
  std::set<std::string> names() const;

 private:
  mutable std::mutex mu_;
  std::set<std::string> names_;
  const Graph* last_ = nullptr;
};

/// Cuts the host nodes out of `block`; nullopt when it has none and no input
/// needs it. `run_time`: names of the integer and bool values the whole graph
/// reads at run time (not computed from dims: token ids, masks), which aot's
/// code reads as data rather than the host nodes as known values.
/// kUnsupported when a host value an aot node reads has no known rank.
[[nodiscard]] Result<std::optional<HostCut>> cut_host_nodes(
    const Graph& block, const std::set<std::string>& run_time = {});

/// The block that evaluates `cut`'s host nodes per signature and runs
/// `inner` (compiled from cut.graph, lowered as `program`; both null when
/// the cut has no node) on the block inputs and host values.
/// kUnsupported when a Shape reads a value whose dims only a host value binds.
[[nodiscard]] Result<std::unique_ptr<CompiledBlock>> make_host_block(
    const Graph& block, HostCut cut, std::unique_ptr<CompiledBlock> inner, const Program* program);

}  // namespace hone::aot
