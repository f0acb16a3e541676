// Zero-sized values in a compiling backend's plan, shared by onednn and blas.
// A value with a zero dim holds no element, so it is known as soon as its
// dims are: a backend keeps it as a plan-time value (an empty tensor), binds
// no buffer to it and runs no kernel on it. A node reading one is evaluated
// when the plan is built, on the reference (host_eval), by ONNX's rules for
// the empty set (a ReduceSum over an empty axis is 0, a Gemm of K = 0 is
// beta * C):
// - every input known at plan time: its outputs are values of the plan;
// - else zeros stand for the inputs known only at run time (their dims are
//   all that counts) and the outputs' dims come out; when every output is
//   empty the node is done. What is left (a Concat with a part of nothing,
//   a Scatter with no index) each backend plans by its own rules.
//
//   HONE_TRY(empty_values::Outcome r, empty_values::evaluate(g, n, env, dtype_of));
//   if (r.known || r.all_empty()) keep(r.outputs);  // no kernel runs
//   else if (n.op_type == "Concat") ...             // the parts that are not empty
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "backends/common/host_eval.h"
#include "hone/error.h"
#include "hone/graph.h"
#include "hone/tensor.h"

namespace hone::empty_values {

/// The first input slot of `op` whose values (not dims) its output's shape
/// depends on (a Reshape's target, Slice's bounds, TopK's K...), or none.
/// Zeros in place of such an input would give a wrong shape.
std::optional<size_t> shape_from_values(const std::string& op);

/// A node reading an empty value, evaluated at plan time.
struct Outcome {
  /// Every input was known: `outputs` are the node's values. Otherwise they
  /// were computed on zeros and only their dims and dtypes hold.
  bool known = false;
  std::vector<Tensor> outputs;  // one per wired output, in order
  bool all_empty() const;
};

/// Evaluates `n` now: `env.value(v)` gives the inputs known at plan time
/// (empty values included), `env.dims(v)` the dims of the others, which
/// zeros of `dtype(v)` stand for. kUnsupported when such an input decides
/// the output's shape (shape_from_values); the reference's errors otherwise.
[[nodiscard]] Result<Outcome> evaluate(const Graph& g, const Node& n, const host_eval::Env& env,
                                       const std::function<DType(ValueId)>& dtype);

/// `n` is a Scatter, ScatterElements or ScatterND whose indices are empty
/// (`is_empty`): its output is its data as it is.
bool scatter_without_index(const Node& n, const std::function<bool(ValueId)>& is_empty);

}  // namespace hone::empty_values
