// Reference kernels for ONNX sequences (SequenceEmpty, SequenceConstruct,
// SequenceAt, SequenceInsert, SequenceErase, SequenceLength, SplitToSequence,
// ConcatFromSequence, SequenceMap) and optionals (Optional,
// OptionalHasElement, OptionalGetElement).
#include "eval/ops_control_internal.h"

#include <algorithm>
#include <string>
#include <vector>

#include "eval/kernel_util.h"
#include "hone/shape.h"
#include "ops/attrs.h"

namespace hone::eval::control {
namespace {

// --- helpers ------------------------------------------------------------------------

Result<const RuntimeValue*> sequence_input(KernelContext& ctx, size_t i) {
  const RuntimeValue* v = ctx.value(i);
  if (v == nullptr || !v->is_sequence())
    return fail(ErrorCode::kInvalidArgument,
                ctx.node().op_type + " input " + std::to_string(i) + " must be a sequence, got " +
                    (v == nullptr ? std::string("nothing") : describe_value(*v)));
  return v;
}

// A position input (scalar int32/int64) checked against [lo, hi], made non-negative.
Result<int64_t> read_position(const Tensor& t, int64_t size, bool allow_end,
                              const std::string& op) {
  if (t.dtype() != DType::kI32 && t.dtype() != DType::kI64)
    return fail(ErrorCode::kInvalidArgument,
                op + " position must be int32 or int64, got " + t.describe());
  HONE_TRY(int64_t pos, scalar_int(t, op + " position"));
  const int64_t hi = allow_end ? size : size - 1;
  if (pos < -size || pos > hi)
    return fail(ErrorCode::kInvalidArgument,
                op + " position " + std::to_string(pos) + " is out of range for a sequence of " +
                    std::to_string(size) + " (valid: [" + std::to_string(-size) + ", " +
                    std::to_string(hi) + "])");
  return pos < 0 ? pos + size : pos;
}

// --- sequence ops ---------------------------------------------------------------------

Result<void> sequence_empty(KernelContext& ctx) {
  HONE_TRY(DType dt, dtype_from_onnx(ctx.node().attr_int("dtype", 1)));
  ctx.set_output_value(0, RuntimeValue::of_sequence({}, dt));
  return {};
}

Result<void> sequence_construct(KernelContext& ctx) {
  if (ctx.num_inputs() == 0)
    return fail(ErrorCode::kInvalidArgument, "SequenceConstruct needs at least one input");
  std::vector<Tensor> seq;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    HONE_TRY(const Tensor* t, ctx.tensor(i));
    if (!seq.empty() && t->dtype() != seq.front().dtype())
      return fail(ErrorCode::kInvalidArgument,
                  "SequenceConstruct inputs must share a dtype: input 0 is " +
                      seq.front().describe() + ", input " + std::to_string(i) + " is " +
                      t->describe());
    seq.push_back(*t);
  }
  const DType dt = seq.front().dtype();
  ctx.set_output_value(0, RuntimeValue::of_sequence(std::move(seq), dt));
  return {};
}

Result<void> sequence_at(KernelContext& ctx) {
  HONE_TRY(const RuntimeValue* s, sequence_input(ctx, 0));
  HONE_TRY(const Tensor* p, ctx.tensor(1));
  HONE_TRY(int64_t pos,
           read_position(*p, static_cast<int64_t>(s->sequence.size()), false, "SequenceAt"));
  ctx.set_output(0, s->sequence[static_cast<size_t>(pos)]);
  return {};
}

Result<void> sequence_insert(KernelContext& ctx) {
  HONE_TRY(const RuntimeValue* s, sequence_input(ctx, 0));
  HONE_TRY(const Tensor* t, ctx.tensor(1));
  const int64_t n = static_cast<int64_t>(s->sequence.size());
  if ((n > 0 && t->dtype() != s->sequence.front().dtype()) ||
      (s->elem_type != DType::kUndefined && t->dtype() != s->elem_type))
    return fail(ErrorCode::kInvalidArgument, "SequenceInsert tensor " + t->describe() +
                                                 " does not match the sequence's element type " +
                                                 std::string(dtype_name(s->elem_type)));
  int64_t pos = n;
  if (ctx.has_input(2)) {
    HONE_TRY(const Tensor* p, ctx.tensor(2));
    HONE_TRY(pos, read_position(*p, n, true, "SequenceInsert"));
  }
  std::vector<Tensor> seq = s->sequence;
  seq.insert(seq.begin() + pos, *t);
  ctx.set_output_value(0, RuntimeValue::of_sequence(std::move(seq), t->dtype()));
  return {};
}

Result<void> sequence_erase(KernelContext& ctx) {
  HONE_TRY(const RuntimeValue* s, sequence_input(ctx, 0));
  const int64_t n = static_cast<int64_t>(s->sequence.size());
  if (n == 0) return fail(ErrorCode::kInvalidArgument, "SequenceErase on an empty sequence");
  int64_t pos = n - 1;
  if (ctx.has_input(1)) {
    HONE_TRY(const Tensor* p, ctx.tensor(1));
    HONE_TRY(pos, read_position(*p, n, false, "SequenceErase"));
  }
  std::vector<Tensor> seq = s->sequence;
  seq.erase(seq.begin() + pos);
  ctx.set_output_value(0, RuntimeValue::of_sequence(std::move(seq), s->elem_type));
  return {};
}

Result<void> sequence_length(KernelContext& ctx) {
  HONE_TRY(const RuntimeValue* s, sequence_input(ctx, 0));
  ctx.set_output(0, Tensor::scalar<int64_t>(static_cast<int64_t>(s->sequence.size())));
  return {};
}

Result<void> split_to_sequence(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  const int64_t rank = static_cast<int64_t>(x->rank());
  if (rank == 0)
    return fail(ErrorCode::kInvalidArgument, "SplitToSequence input must not be a scalar");
  HONE_TRY(int64_t axis, normalize_axis(ops::axis_attr(ctx.node()), rank, "SplitToSequence axis"));
  const int64_t dim = x->dim(static_cast<size_t>(axis));
  std::vector<Tensor> seq;
  if (!ctx.has_input(1)) {
    const bool keepdims = ops::keepdims_attr(ctx.node());
    for (int64_t i = 0; i < dim; ++i)
      seq.push_back(keepdims ? narrow_along(*x, axis, i, 1) : slice_along(*x, axis, i));
  } else {
    HONE_TRY(const Tensor* split, ctx.tensor(1));
    if (!is_integer(split->dtype()) || split->rank() > 1)
      return fail(ErrorCode::kInvalidArgument,
                  "SplitToSequence split must be an integer scalar or 1-D tensor, got " +
                      split->describe());
    std::vector<int64_t> sizes = to_int64s(*split);
    if (split->rank() == 0) {
      const int64_t chunk = sizes[0];
      if (chunk <= 0)
        return fail(ErrorCode::kInvalidArgument,
                    "SplitToSequence split must be positive, got " + std::to_string(chunk));
      sizes.clear();
      for (int64_t done = 0; done < dim; done += chunk)
        sizes.push_back(std::min(chunk, dim - done));
    } else {
      int64_t total = 0;
      for (int64_t s : sizes) {
        if (s < 0)
          return fail(ErrorCode::kInvalidArgument,
                      "SplitToSequence split sizes must be non-negative, got " + std::to_string(s));
        total += s;
      }
      if (total != dim)
        return fail(ErrorCode::kInvalidArgument, "SplitToSequence split sizes sum to " +
                                                     std::to_string(total) + " but axis " +
                                                     std::to_string(axis) + " of " + x->describe() +
                                                     " has " + std::to_string(dim));
    }
    int64_t begin = 0;
    for (int64_t s : sizes) {
      seq.push_back(narrow_along(*x, axis, begin, s));
      begin += s;
    }
  }
  ctx.set_output_value(0, RuntimeValue::of_sequence(std::move(seq), x->dtype()));
  return {};
}

Result<void> concat_from_sequence(KernelContext& ctx) {
  HONE_TRY(const RuntimeValue* s, sequence_input(ctx, 0));
  if (!ctx.node().has_attr("axis"))
    return fail(ErrorCode::kInvalidArgument, "ConcatFromSequence requires the 'axis' attribute");
  if (s->sequence.empty())
    return fail(ErrorCode::kInvalidArgument, "ConcatFromSequence of an empty sequence");
  const bool new_axis = ctx.node().attr_int("new_axis", 0) != 0;
  const int64_t rank = static_cast<int64_t>(s->sequence.front().rank());
  const int64_t axis_attr = ops::axis_attr(ctx.node());
  if (new_axis) {
    HONE_TRY(int64_t axis, normalize_axis(axis_attr, rank + 1, "ConcatFromSequence axis"));
    HONE_TRY(Tensor t, stack_along(s->sequence, axis, "ConcatFromSequence"));
    ctx.set_output(0, std::move(t));
    return {};
  }
  if (rank == 0)
    return fail(ErrorCode::kInvalidArgument,
                "ConcatFromSequence cannot concatenate scalars without new_axis=1");
  HONE_TRY(int64_t axis, normalize_axis(axis_attr, rank, "ConcatFromSequence axis"));
  HONE_TRY(Tensor t, concat_along(s->sequence, axis, "ConcatFromSequence"));
  ctx.set_output(0, std::move(t));
  return {};
}

// SequenceMap: runs `body` once per position; sequence inputs give their
// element at that position, tensor inputs are passed whole each time.
Result<void> sequence_map(KernelContext& ctx) {
  const Graph* body = ctx.node().attr_graph("body");
  if (body == nullptr)
    return fail(ErrorCode::kInvalidArgument, "SequenceMap is missing its 'body' graph");
  HONE_TRY(const RuntimeValue* first, sequence_input(ctx, 0));
  const size_t n = first->sequence.size();
  if (body->inputs().size() != ctx.num_inputs() || body->outputs().size() != ctx.num_outputs())
    return fail(ErrorCode::kInvalidArgument,
                "SequenceMap body takes " + std::to_string(body->inputs().size()) +
                    " inputs and returns " + std::to_string(body->outputs().size()) +
                    "; the node has " + std::to_string(ctx.num_inputs()) + " and " +
                    std::to_string(ctx.num_outputs()));
  for (size_t i = 1; i < ctx.num_inputs(); ++i) {
    const RuntimeValue* v = ctx.value(i);
    if (v == nullptr || v->is_none())
      return fail(ErrorCode::kInvalidArgument,
                  "SequenceMap input " + std::to_string(i) + " is missing");
    if (v->is_sequence() && v->sequence.size() != n)
      return fail(ErrorCode::kInvalidArgument, "SequenceMap input " + std::to_string(i) + " has " +
                                                   std::to_string(v->sequence.size()) +
                                                   " elements but input 0 has " +
                                                   std::to_string(n));
  }
  std::vector<std::vector<Tensor>> results(ctx.num_outputs());
  for (size_t pos = 0; pos < n; ++pos) {
    std::vector<RuntimeValue> ins;
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      const RuntimeValue* v = ctx.value(i);
      ins.push_back(v->is_sequence() ? RuntimeValue::of(v->sequence[pos]) : *v);
    }
    HONE_TRY(std::vector<RuntimeValue> outs, ctx.run_subgraph(*body, std::move(ins)));
    for (size_t k = 0; k < outs.size(); ++k) {
      if (!outs[k].is_tensor())
        return fail(ErrorCode::kInvalidArgument, "SequenceMap body output " + std::to_string(k) +
                                                     " must be a tensor, got " +
                                                     describe_value(outs[k]));
      results[k].push_back(std::move(outs[k].tensor));
    }
  }
  for (size_t k = 0; k < results.size(); ++k) {
    DType dt = body->value(body->outputs()[k]).dtype;
    if (!results[k].empty()) dt = results[k].front().dtype();
    ctx.set_output_value(k, RuntimeValue::of_sequence(std::move(results[k]), dt));
  }
  return {};
}

// --- optionals ------------------------------------------------------------------------------

// Element type named by a TYPE_PROTO attribute the importer stored as text:
// "tensor(float)", "seq(tensor(int64))", "optional(tensor(float))".
Result<DType> elem_type_of(const std::string& type) {
  const size_t open = type.rfind('(');
  const size_t close = type.find(')');
  if (open == std::string::npos && close == std::string::npos) {
    // A bare element type ("float").
    auto dt = dtype_from_string(type);
    if (dt) return dt;
  } else if (open != std::string::npos && close != std::string::npos && close > open) {
    auto dt = dtype_from_string(type.substr(open + 1, close - open - 1));
    if (dt) return dt;
  }
  return fail(ErrorCode::kInvalidArgument, "Optional type '" + type +
                                               "' is not like 'tensor(float)' with a known "
                                               "element type");
}

Result<void> optional_op(KernelContext& ctx) {
  RuntimeValue out;
  if (ctx.num_inputs() > 0 && ctx.value(0) != nullptr && !ctx.value(0)->is_none()) {
    out = *ctx.value(0);
  } else {
    const std::string type = ctx.node().attr_string("type", "");
    if (type.empty())
      return fail(ErrorCode::kInvalidArgument,
                  "Optional without an input needs the 'type' attribute to say what it would hold");
    HONE_TRY(out.elem_type, elem_type_of(type));
    out.kind = RuntimeValue::Kind::kNone;
  }
  out.optional = true;
  ctx.set_output_value(0, std::move(out));
  return {};
}

Result<void> optional_has_element(KernelContext& ctx) {
  // has_input is false for an omitted input and for an empty optional.
  ctx.set_output(0, Tensor::scalar<bool>(ctx.has_input(0)));
  return {};
}

Result<void> optional_get_element(KernelContext& ctx) {
  const RuntimeValue* v = ctx.value(0);
  if (v == nullptr || v->is_none())
    return fail(ErrorCode::kInvalidArgument, "OptionalGetElement on an empty optional");
  // Opset 18 also accepts plain tensors and sequences (returned as they are);
  // earlier opsets are not stricter here, since the type checker owns that rule.
  RuntimeValue out = *v;
  out.optional = false;
  ctx.set_output_value(0, std::move(out));
  return {};
}

}  // namespace

void register_sequence_ops(OpRegistry& r) {
  r.add("SequenceEmpty", sequence_empty);
  r.add("SequenceConstruct", sequence_construct);
  r.add("SequenceAt", sequence_at);
  r.add("SequenceInsert", sequence_insert);
  r.add("SequenceErase", sequence_erase);
  r.add("SequenceLength", sequence_length);
  r.add("SplitToSequence", split_to_sequence);
  r.add("ConcatFromSequence", concat_from_sequence);
  r.add("SequenceMap", sequence_map);
}

void register_optional_ops(OpRegistry& r) {
  r.add("Optional", optional_op);
  r.add("OptionalHasElement", optional_has_element);
  r.add("OptionalGetElement", optional_get_element);
}

}  // namespace hone::eval::control
