// Host evaluation of shape subgraphs, shared by every compiling backend:
// nodes whose inputs are only dims (Shape, Size) and constants (Cast, Slice,
// Concat, Gather, Unsqueeze, ... of them) are computed on the host once per
// input-shape signature, when a backend builds its plan, never on the device
// and never per inference. A Reshape whose target an exporter computes from
// Shape at run time (every attention block: Shape -> Gather -> Unsqueeze ->
// Concat -> Reshape) is then a constant of the plan, and its block stays whole.
//
//   if (host_eval::host_node(g, n, policy)) ...            // support: decided on the graph
//   HONE_TRY(auto outs, host_eval::evaluate(g, n, env));   // plan: on the reference
//
// Two policies: kIntegers (only integer results, the shape arithmetic a
// backend with plan constants of integer type can consume: onednn) and
// kAnyDtype (also f32 and bool results that depend only on shapes and
// constants, such as an attention scale 1/sqrt(dim) or a mask made with
// Range and Where: cuda uploads those once per plan).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "hone/error.h"
#include "hone/graph.h"
#include "ops/slice.h"
#include "ops/split.h"

namespace hone::host_eval {

enum class Policy {
  kIntegers,  // i64/i32 results of a short list of shape ops
  kAnyDtype,  // any dtype, a longer list (comparisons, Where, Range, Expand, ...)
};

/// Per value id of a block graph: its value is known when the plan is built
/// though nothing in the block makes it (an input another block computed
/// from dims, whose values the plan's key carries). Empty: none.
using Known = std::vector<bool>;

/// `n` computes its outputs from dims and constants only (Shape and Size read
/// nothing but their input's dims), within `policy`, so it can be evaluated
/// when a plan is built. Decided on the graph (and `known`); a pure function of it.
bool host_node(const Graph& g, const Node& n, Policy policy = Policy::kIntegers,
               const Known& known = {});
/// `v` is a constant allowed by `policy`, a known value or the output of a host node.
bool host_value(const Graph& g, ValueId v, Policy policy = Policy::kIntegers,
                const Known& known = {});

/// What evaluation reads from the plan being built. Either may return
/// nullptr for a value it does not know; evaluate() then fails with kInternal.
struct Env {
  std::function<const std::vector<int64_t>*(ValueId)> dims;  // any value's dims (Shape, Size)
  std::function<const Tensor*(ValueId)> value;               // a constant or host value
};

/// Evaluates host node `n` (Shape and Size directly, every other op alone on
/// the reference interpreter with its inputs as initializers). One tensor per
/// wired output, in order of n.outputs (omitted outputs are skipped).
[[nodiscard]] Result<std::vector<Tensor>> evaluate(const Graph& g, const Node& n, const Env& env);

/// The integers of input `i` of `n` (a Reshape target, Slice bounds, Expand
/// shape...), which `env` knows when the plan is built; `what` names them in
/// errors: kUnsupported when unknown (a block input made by a node of another
/// block, such as the Shape of a NonZero's output that ran on the
/// reference: its value comes only when the block runs), kInvalidArgument
/// when not i64 or i32.
[[nodiscard]] Result<std::vector<int64_t>> ints(const Node& n, size_t i, const Env& env,
                                                const std::string& what);

/// Slice `n` of an input of dims `x`: its bounds read (attributes before
/// opset 10, inputs known to `env` from 10 on) and resolved by
/// ops::slice_window; errors name the node.
[[nodiscard]] Result<ops::SliceWindow> slice_window(const Node& n, int64_t opset,
                                                    const std::vector<int64_t>& x, const Env& env);

/// Split `n` of an input of dims `x` (its `split` input known to `env` when
/// wired) into its parts (ops::split_parts); errors name the node.
[[nodiscard]] Result<ops::SplitParts> split_parts(const Node& n, const std::vector<int64_t>& x,
                                                  const Env& env);

/// Per input of `block`: only Shape and Size read it (and it is no block
/// output), so no kernel reads its elements and its dtype does not matter
/// (input_ids whose length makes the positions and the masks).
std::vector<bool> dims_only_inputs(const Graph& block);

/// The block inputs of an f32 backend whose values a plan takes as known
/// (by value id): integer and bool inputs that are not dims-only. No kernel
/// of such a backend reads their elements as data, except where `data_slot`
/// says a node reads that input slot at run time (a Where's condition).
Known known_inputs(const Graph& block,
                   const std::function<bool(const Node&, size_t)>& data_slot = nullptr);

}  // namespace hone::host_eval
