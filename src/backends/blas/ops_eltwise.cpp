// Element-wise nodes: chains of unary/binary ops fused into one pass, and
// BatchNormalization (outside a Conv) as a per-channel affine program.
#include <cmath>
#include <limits>

#include "backends/blas/op.h"
#include "ops/attrs.h"
#include "ops/broadcast.h"
#include "ops/unary.h"

namespace hone::blas {
namespace {

using kernels::EwInstr;
using kernels::EwOp;

/// Scalar f32 constant input `i` of `n`, or `fallback` when omitted.
bool const_scalar(const Graph& g, const Node& n, size_t i, float fallback, float* out) {
  if (i >= n.inputs.size() || n.inputs[i] < 0) {
    *out = fallback;
    return true;
  }
  const Value& v = g.value(n.inputs[i]);
  if (!v.initializer || v.initializer->dtype() != DType::kF32 || v.initializer->numel() != 1)
    return false;
  *out = v.initializer->data<float>()[0];
  return true;
}

bool known_dims(const Value& v, std::vector<Dim>* out) {
  if (!v.shape) return false;
  out->assign(v.shape->dims().begin(), v.shape->dims().end());
  return true;
}

/// For epilogues: `operand` may broadcast to `out` without growing it. With
/// shapes unknown here (builder graphs), plan() decides per signature.
bool fits_in(const Graph& g, ValueId operand, ValueId out) {
  std::vector<Dim> od, xd;
  if (!known_dims(g.value(out), &od) || !known_dims(g.value(operand), &xd)) return true;
  if (xd.size() > od.size()) return false;
  for (size_t i = 0; i < xd.size(); ++i) {
    const Dim& o = od[od.size() - xd.size() + i];
    if (!(xd[i] == Dim(1) || xd[i] == o)) return false;
  }
  return true;
}

/// The operand index reading value `v`, adding `v` to the unit's inputs and
/// the operand list when new (GELU reads its input twice: one operand).
int operand_index(EwOperands* ops, std::vector<ValueId>* unit_inputs, ValueId v) {
  size_t u = 0;
  while (u < unit_inputs->size() && (*unit_inputs)[u] != v) ++u;
  if (u == unit_inputs->size()) unit_inputs->push_back(v);
  for (size_t k = 0; k < ops->size(); ++k)
    if (ops->input[k] == static_cast<int>(u)) return static_cast<int>(k);
  ops->input.push_back(static_cast<int>(u));
  ops->own.emplace_back();
  return static_cast<int>(ops->size() - 1);
}

class EltwiseOp final : public Op {
 public:
  EltwiseOp(kernels::EwProgram prog, EwOperands ops)
      : prog_(std::move(prog)), ops_(std::move(ops)) {}

  Result<OpPlan> plan(const std::vector<dims_t>& inputs, const PlanEnv&) const override {
    std::vector<dims_t> shapes;
    for (size_t k = 0; k < ops_.size(); ++k)
      if (!ops_.is_per_channel(k))
        shapes.push_back(ops_.input[k] >= 0 ? inputs[static_cast<size_t>(ops_.input[k])]
                                            : ops_.own[k].shape());
    HONE_TRY(dims_t out, ops::broadcast_shapes(shapes));
    HONE_TRY(kernels::EwLayout layout, plan_operands(ops_, inputs, {}, out));
    OpPlan p;
    p.outputs = {out};
    p.kernel = "eltwise.f32.blas.fused(" + prog_.describe() + ")";
    // The program reads every operand's tile before writing that tile of the
    // output, so the output may overwrite any operand of its own shape.
    for (size_t k = 0; k < ops_.size(); ++k)
      if (ops_.input[k] >= 0 && inputs[static_cast<size_t>(ops_.input[k])] == out)
        p.in_place.push_back(ops_.input[k]);
    p.run = [this, layout = std::move(layout)](const RunArgs& a) {
      kernels::eltwise_run_parallel(*a.pool, prog_, layout, bind_operands(ops_, a, nullptr),
                                    a.outputs[0]);
    };
    return p;
  }

 private:
  kernels::EwProgram prog_;
  EwOperands ops_;
};

}  // namespace

bool unary_instr(const Graph& g, const Node& n, EwInstr* out) {
  const std::string& op = n.op_type;
  EwInstr in;
  if (const ops::UnaryFormula* f = ops::find_unary(op)) {
    auto p = ops::unary_params(n, *f);
    if (!p) return false;
    // LeakyRelu has a float loop of its own (vectorized); the rest call the
    // schema's formula in double.
    in.op = op == "LeakyRelu" ? EwOp::kLeakyRelu : EwOp::kFormula;
    in.formula = f;
    in.a = p->a;
    in.b = p->b;
  } else if (op == "Relu") {
    in.op = EwOp::kRelu;
  } else if (op == "Sigmoid") {
    in.op = EwOp::kSigmoid;
  } else if (op == "Tanh") {
    in.op = EwOp::kTanh;
  } else if (op == "Clip") {
    in.op = EwOp::kClip;
    const float inf = std::numeric_limits<float>::infinity();
    if (g.opset() < 11) {
      const ops::ClipAttrs c = ops::clip_attrs(n);
      in.a = c.min;
      in.b = c.max;
    } else if (!const_scalar(g, n, 1, -inf, &in.a) || !const_scalar(g, n, 2, inf, &in.b)) {
      return false;
    }
  } else if (op == "Erf") {
    in.op = EwOp::kErf;
  } else if (op == "Exp") {
    in.op = EwOp::kExp;
  } else if (op == "Log") {
    in.op = EwOp::kLog;
  } else if (op == "Sqrt") {
    in.op = EwOp::kSqrt;
  } else if (op == "Abs") {
    in.op = EwOp::kAbs;
  } else if (op == "Neg") {
    in.op = EwOp::kNeg;
  } else if (op == "Reciprocal") {
    in.op = EwOp::kReciprocal;
  } else if (op == "Gelu") {
    auto approx = ops::gelu_approx(n);
    if (!approx) return false;
    in.op = *approx == ops::GeluApprox::kTanh ? EwOp::kGeluTanh : EwOp::kGelu;
  } else {
    return false;
  }
  *out = in;
  return true;
}

bool binary_op(const Node& n, EwOp* out) {
  static const std::pair<const char*, EwOp> kOps[] = {{"Add", EwOp::kAdd}, {"Sub", EwOp::kSub},
                                                      {"Mul", EwOp::kMul}, {"Div", EwOp::kDiv},
                                                      {"Pow", EwOp::kPow}, {"PRelu", EwOp::kPRelu}};
  for (const auto& [name, op] : kOps)
    if (n.op_type == name) {
      *out = op;
      return true;
    }
  return false;
}

ValueId absorb_eltwise(const BlockInfo& b, ValueId cur, bool epilogue, kernels::EwProgram* prog,
                       EwOperands* ops, std::vector<ValueId>* unit_inputs,
                       std::vector<NodeId>* absorbed) {
  const Graph& g = b.g;
  while (const Node* n = b.sole_consumer(cur)) {
    if (n->outputs.empty() || n->outputs[0] < 0) break;
    EwInstr in;
    EwOp bop;
    if (unary_instr(g, *n, &in)) {
      if (n->inputs[0] != cur) break;
    } else if (binary_op(*n, &bop) && n->inputs.size() == 2) {
      const bool first = n->inputs[0] == cur, second = n->inputs[1] == cur;
      if (first == second) break;  // x op x: not a chain step
      if (bop == EwOp::kPRelu && !first) break;
      const ValueId other = first ? n->inputs[1] : n->inputs[0];
      if (epilogue && !fits_in(g, other, cur)) break;
      in.op = bop;
      in.reversed = second;
      in.operand = operand_index(ops, unit_inputs, other);
    } else {
      break;
    }
    prog->code.push_back(in);
    absorbed->push_back(static_cast<NodeId>(n - g.nodes().data()));
    cur = n->outputs[0];
  }
  return cur;
}

Result<Unit> create_eltwise(const BlockInfo& b, const Node& n, std::vector<NodeId>* absorbed) {
  const Graph& g = b.g;
  kernels::EwProgram prog;
  EwOperands ops;
  Unit u;
  u.label = n.describe();
  EwInstr in;
  EwOp bop;
  if (n.op_type == "BatchNormalization") {
    // y = x * s + t per channel (axis 1), s = scale / sqrt(var + eps), t = bias - mean * s.
    const Tensor& scale = *g.value(n.inputs[1]).initializer;
    const Tensor& bias = *g.value(n.inputs[2]).initializer;
    const Tensor& mean = *g.value(n.inputs[3]).initializer;
    const Tensor& var = *g.value(n.inputs[4]).initializer;
    HONE_TRY(const ops::BatchNormAttrs bn, ops::batch_norm_attrs(n));
    const double eps = bn.epsilon;
    const int64_t c = scale.numel();
    if (bias.numel() != c || mean.numel() != c || var.numel() != c)
      return fail(ErrorCode::kInvalidArgument,
                  "BatchNormalization scale, bias, mean and var must have the same length");
    Tensor s = Tensor::zeros(DType::kF32, {c}), t = Tensor::zeros(DType::kF32, {c});
    for (int64_t i = 0; i < c; ++i) {
      const double k = scale.data<float>()[i] / std::sqrt(var.data<float>()[i] + eps);
      s.data<float>()[i] = static_cast<float>(k);
      t.data<float>()[i] = static_cast<float>(bias.data<float>()[i] - mean.data<float>()[i] * k);
    }
    u.inputs.push_back(n.inputs[0]);
    ops.input = {0, -1, -1};
    ops.own = {Tensor(), s, t};
    ops.per_channel = {false, true, true};
    prog.code = {{EwOp::kMul, 1, false, 0, 0}, {EwOp::kAdd, 2, false, 0, 0}};
  } else if (unary_instr(g, n, &in)) {
    operand_index(&ops, &u.inputs, n.inputs[0]);
    prog.code.push_back(in);
  } else if (binary_op(n, &bop) && n.inputs.size() == 2) {
    operand_index(&ops, &u.inputs, n.inputs[0]);
    in.op = bop;
    in.operand = operand_index(&ops, &u.inputs, n.inputs[1]);
    prog.code.push_back(in);
  } else {
    return fail(ErrorCode::kUnsupported, "no element-wise kernel for node " + n.describe());
  }
  const size_t before = absorbed->size();
  const ValueId last = absorb_eltwise(b, n.outputs[0], false, &prog, &ops, &u.inputs, absorbed);
  for (size_t i = before; i < absorbed->size(); ++i)
    u.label += "+" + g.node((*absorbed)[i]).op_type;
  u.outputs = {last};
  u.op = std::make_unique<EltwiseOp>(std::move(prog), std::move(ops));
  return u;
}

Result<kernels::EwLayout> plan_operands(const EwOperands& ops,
                                        const std::vector<dims_t>& unit_inputs, const dims_t& first,
                                        const dims_t& out) {
  std::vector<dims_t> shapes;
  for (size_t k = 0; k < ops.size(); ++k) {
    const int src = ops.input[k];
    if (ops.is_per_channel(k)) {
      // [C] against [N, C, ...]: C on axis 1.
      if (out.size() < 2 || out[1] != ops.own[k].numel())
        return fail(ErrorCode::kInvalidArgument,
                    std::to_string(ops.own[k].numel()) + " channels do not match the input");
      dims_t d(out.size() - 1, 1);
      d[0] = out[1];
      shapes.push_back(std::move(d));
      continue;
    }
    shapes.push_back(src >= 0 ? unit_inputs[static_cast<size_t>(src)]
                              : (src == -2 ? first : ops.own[k].shape()));
  }
  return kernels::EwLayout::make(out, shapes);
}

std::vector<const float*> bind_operands(const EwOperands& ops, const RunArgs& args,
                                        const float* first) {
  std::vector<const float*> p(ops.size());
  for (size_t k = 0; k < ops.size(); ++k) {
    const int src = ops.input[k];
    p[k] = src >= 0 ? args.inputs[static_cast<size_t>(src)]
                    : (src == -2 ? first : ops.own[k].data<float>());
  }
  return p;
}

}  // namespace hone::blas
