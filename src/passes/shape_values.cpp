#include "passes/shape_values.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "eval/kernel_util.h"
#include "ops/attrs.h"
#include "ops/axis.h"
#include "ops/shape_fn.h"
#include "ops/slice.h"
#include "passes/rewrite.h"

namespace hone::passes {
namespace {

using ops::SymInt;

bool integral(DType t) {
  return t == DType::kI64 || t == DType::kI32 || t == DType::kI16 || t == DType::kI8 ||
         t == DType::kU8 || t == DType::kBool;
}

/// Known numbers of every entry, or nothing.
std::optional<std::vector<int64_t>> numbers(const std::optional<SymInts>& e) {
  if (!e) return std::nullopt;
  std::vector<int64_t> out;
  for (const SymInt& s : *e) {
    if (!s.is_number()) return std::nullopt;
    out.push_back(s.number());
  }
  return out;
}

/// An expression of dims with no minus sign in it is never negative.
bool never_negative(const SymInt& s) {
  return s.is_number() ? s.number() >= 0
                       : s.is_known() && s.to_string().find('-') == std::string::npos;
}

/// Equal's answer where one can be given: the same value, two numbers, or a
/// dim against a negative number (torch's expand(B, -1, -1) asks exactly this).
SymInt equal(const SymInt& a, const SymInt& b) {
  if (!a.is_known() || !b.is_known()) return SymInt();
  if (a == b) return 1;
  if (a.is_number() && b.is_number()) return 0;
  if ((a.is_number() && a.number() < 0 && never_negative(b)) ||
      (b.is_number() && b.number() < 0 && never_negative(a)))
    return 0;
  return SymInt();
}

SymInt binary(const std::string& op, const SymInt& a, const SymInt& b, bool floating) {
  if (op == "Add") return a + b;
  if (op == "Sub") return a - b;
  if (op == "Mul") return a * b;
  if (op == "Div") {
    if (!floating) return a / b;
    auto q = exact_div(a, b);  // a float quotient is a whole number only when exact
    return q ? *q : SymInt();
  }
  if (op == "Equal") return equal(a, b);
  if (!a.is_number() || !b.is_number()) return SymInt();
  const int64_t x = a.number(), y = b.number();
  if (op == "Max") return std::max(x, y);
  if (op == "Min") return std::min(x, y);
  if (op == "Mod") return y == 0 ? SymInt() : SymInt(((x % y) + y) % y);
  if (op == "Less") return x < y ? 1 : 0;
  if (op == "Greater") return x > y ? 1 : 0;
  if (op == "LessOrEqual") return x <= y ? 1 : 0;
  if (op == "GreaterOrEqual") return x >= y ? 1 : 0;
  return SymInt();
}

/// Element-wise over lists where each is as long as the longest or one entry long.
template <class F>
std::optional<SymInts> elementwise(const std::vector<const SymInts*>& in, F f) {
  size_t n = 1;
  for (const SymInts* e : in) n = std::max(n, e->size());
  for (const SymInts* e : in)
    if (e->size() != n && e->size() != 1) return std::nullopt;
  SymInts out;
  for (size_t i = 0; i < n; ++i) {
    std::vector<SymInt> args;
    for (const SymInts* e : in) args.push_back((*e)[e->size() == 1 ? 0 : i]);
    out.push_back(f(args));
  }
  return out;
}

}  // namespace

std::optional<SymInts> ShapeValues::of(ValueId v) {
  return at(v, 0);
}

std::optional<SymInts> ShapeValues::at(ValueId v, int depth) {
  if (v < 0 || depth > 32) return std::nullopt;
  if (auto it = memo_.find(v); it != memo_.end()) return it->second;
  auto r = compute(v, depth);
  if (r && static_cast<int64_t>(r->size()) > kMaxEntries) r.reset();
  memo_[v] = r;
  return r;
}

std::optional<SymInts> ShapeValues::compute(ValueId v, int depth) {
  const Value& val = g_.value(v);
  if (val.initializer) {
    const Tensor& t = *val.initializer;
    if (t.rank() > 1 || t.numel() > kMaxEntries || !integral(t.dtype())) return std::nullopt;
    SymInts out;
    for (int64_t i = 0; i < t.numel(); ++i) out.emplace_back(tensor_element_as_int64(t, i));
    return out;
  }
  if (val.producer < 0) return std::nullopt;
  const Node& n = g_.node(val.producer);
  if (!(n.domain.empty() || n.domain == "ai.onnx") || n.inputs.empty() || n.inputs[0] < 0)
    return std::nullopt;
  const std::string& op = n.op_type;
  auto in = [&](size_t i) -> std::optional<SymInts> {
    if (i >= n.inputs.size()) return std::nullopt;
    return at(n.inputs[i], depth + 1);
  };
  if (op == "Shape" || op == "Size") {
    const Value& x = g_.value(n.inputs[0]);
    if (!x.shape) return std::nullopt;
    if (op == "Size") {
      SymInt p = 1;
      for (const Dim& d : x.shape->dims()) p = p * SymInt::of(d);
      return SymInts{p};
    }
    const auto [b, e] = ops::shape_range(n, static_cast<int64_t>(x.shape->rank()));
    SymInts out;
    for (int64_t i = b; i < e; ++i) out.push_back(SymInt::of((*x.shape)[static_cast<size_t>(i)]));
    return out;
  }
  if (op == "Cast") {
    // Integers stay integers; a float holds them exactly at these sizes.
    return in(0);
  }
  if (op == "Identity" || op == "Squeeze" || op == "Unsqueeze" || op == "Reshape" ||
      op == "Floor" || op == "Ceil")
    return in(0);  // the same entries in the same order
  if (op == "Neg") {
    auto a = in(0);
    if (!a) return std::nullopt;
    for (SymInt& s : *a) s = SymInt(0) - s;
    return a;
  }
  if (op == "Concat") {
    SymInts all;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      auto e = in(i);
      if (!e) return std::nullopt;
      all.insert(all.end(), e->begin(), e->end());
    }
    return all;
  }
  if (op == "Gather" && n.inputs.size() == 2 && ops::axis_attr(n) == 0) {
    auto src = in(0);
    auto idx = numbers(in(1));
    if (!src || !idx) return std::nullopt;
    SymInts out;
    const auto r = static_cast<int64_t>(src->size());
    for (int64_t k : *idx) {
      if (k < 0) k += r;
      if (k < 0 || k >= r) return std::nullopt;
      out.push_back((*src)[static_cast<size_t>(k)]);
    }
    return out;
  }
  if (op == "Slice" && n.inputs.size() >= 3) {
    auto src = in(0);
    std::vector<std::vector<int64_t>> lists;
    for (size_t k = 1; k < n.inputs.size(); ++k) {
      auto l = n.inputs[k] < 0 ? std::nullopt : numbers(in(k));
      if (!l) return std::nullopt;
      lists.push_back(std::move(*l));
    }
    if (!src) return std::nullopt;
    const auto w = ops::slice_window({static_cast<int64_t>(src->size())}, lists[0], lists[1],
                                     lists.size() > 2 ? &lists[2] : nullptr,
                                     lists.size() > 3 ? &lists[3] : nullptr);
    if (!w) return std::nullopt;
    SymInts out;
    for (int64_t k = 0; k < w->out[0]; ++k)
      out.push_back((*src)[static_cast<size_t>(w->base + k * w->strides[0])]);
    return out;
  }
  if (op == "ConstantOfShape") {
    auto len = numbers(in(0));
    if (!len || len->size() != 1 || (*len)[0] > kMaxEntries) return std::nullopt;
    int64_t fill = 0;
    if (auto it = n.attrs.find("value"); it != n.attrs.end()) {
      const auto* t = std::get_if<Tensor>(&it->second);
      if (t == nullptr || t->numel() != 1 || !integral(t->dtype())) return std::nullopt;
      fill = tensor_element_as_int64(*t, 0);
    }
    return SymInts(static_cast<size_t>((*len)[0]), SymInt(fill));
  }
  if (op == "Where" && n.inputs.size() == 3) {
    auto c = in(0), x = in(1), y = in(2);
    if (!c || !x || !y) return std::nullopt;
    return elementwise({&*c, &*x, &*y}, [](const std::vector<SymInt>& a) {
      if (!a[0].is_number()) return SymInt();
      return a[0].number() != 0 ? a[1] : a[2];
    });
  }
  if (n.inputs.size() == 2 &&
      (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Max" || op == "Min" ||
       op == "Mod" || op == "Equal" || op == "Less" || op == "Greater" || op == "LessOrEqual" ||
       op == "GreaterOrEqual")) {
    auto a = in(0), b = in(1);
    if (!a || !b) return std::nullopt;
    const bool floating = is_floating(g_.value(n.inputs[0]).dtype);
    return elementwise(
        {&*a, &*b}, [&](const std::vector<SymInt>& x) { return binary(op, x[0], x[1], floating); });
  }
  return std::nullopt;
}

}  // namespace hone::passes

namespace hone::passes {
namespace {

using ops::SymInt;

SymInt product(const std::vector<Dim>& dims) {
  SymInt p = 1;
  for (const Dim& d : dims) p = p * SymInt::of(d);
  return p;
}

std::optional<Shape> reshape_to(const Shape& x, const SymInts& target, bool allowzero) {
  std::vector<Dim> out;
  std::optional<size_t> infer;
  SymInt known = 1;
  for (size_t i = 0; i < target.size(); ++i) {
    const SymInt& e = target[i];
    Dim d;
    if (e.is_number() && e.number() == -1) {
      if (infer) return std::nullopt;
      infer = i;
    } else if (e.is_number() && e.number() == 0 && !allowzero) {
      if (i >= x.rank()) return std::nullopt;
      d = x[i];
    } else if (e.is_number() && e.number() < 0) {
      return std::nullopt;
    } else {
      d = e.dim();  // a number, a symbol, an expression, or unknown
    }
    if (!infer || *infer != i) known = known * SymInt::of(d);
    out.push_back(d);
  }
  if (infer) {
    auto q = exact_div(product(x.dims()), known);
    out[*infer] = q ? q->dim() : Dim::unknown();
  }
  return Shape(std::move(out));
}

/// One sliced axis of dim `d` whose start or end is not a number: with step
/// 1, end - start, where a computed end is taken to fall within the axis
/// (torch slices a causal mask or a position table by the sequence length;
/// a longer sequence then fails the graph's own broadcast, and dim_bounds
/// finds that bound by folding at numbers).
Dim symbolic_slice(const Dim& d, SymInt start, SymInt end, int64_t step) {
  if (step != 1) return Dim::unknown();
  const SymInt len = SymInt::of(d);
  constexpr int64_t kFar = int64_t{1} << 60;
  if (start.is_number() && start.number() < 0) start = len + start;
  if (end.is_number() && end.number() >= kFar) end = len;
  if (end.is_number() && end.number() < 0) end = len + end;
  const SymInt n = end - start;
  return n.is_number() && n.number() < 0 ? Dim(0) : n.dim();
}

}  // namespace

std::optional<Shape> computed_shape(const Graph& g, const Node& n, ShapeValues& values) {
  const std::string& op = n.op_type;
  auto shape_of = [&](size_t i) -> const Shape* {
    if (i >= n.inputs.size() || n.inputs[i] < 0) return nullptr;
    const Value& v = g.value(n.inputs[i]);
    return v.shape ? &*v.shape : nullptr;
  };
  auto operand = [&](size_t i) -> std::optional<SymInts> {
    if (i >= n.inputs.size() || n.inputs[i] < 0) return std::nullopt;
    return values.of(n.inputs[i]);
  };
  const Shape* x = shape_of(0);
  if (op == "ConstantOfShape") {
    auto t = operand(0);
    if (!t) return std::nullopt;
    std::vector<Dim> dims;
    for (const SymInt& e : *t) dims.push_back(e.dim());
    return Shape(std::move(dims));
  }
  if (!x) return std::nullopt;
  if (op == "Reshape") {
    auto t = operand(1);
    if (!t) return std::nullopt;
    return reshape_to(*x, *t, ops::reshape_allowzero(n));
  }
  if (op == "Expand") {
    auto t = operand(1);
    if (!t) return std::nullopt;
    std::vector<Dim> dims;
    for (const SymInt& e : *t) dims.push_back(e.dim());
    auto out = ops::broadcast_shape<Dim>("Expand", {x->dims(), dims});
    return out ? std::optional<Shape>(Shape(std::move(*out))) : std::nullopt;
  }
  if (op == "Tile") {
    auto r = operand(1);
    if (!r || r->size() != x->rank()) return std::nullopt;
    std::vector<Dim> dims;
    for (size_t i = 0; i < x->rank(); ++i) dims.push_back((SymInt::of((*x)[i]) * (*r)[i]).dim());
    return Shape(std::move(dims));
  }
  if (op == "Resize" && g.opset() >= 11 && !n.has_attr("axes")) {
    // Sizes given: the output dims are their entries.
    auto sizes = n.inputs.size() > 3 && n.inputs[3] >= 0 ? operand(3) : std::nullopt;
    if (sizes && sizes->size() == x->rank()) {
      std::vector<Dim> dims;
      for (const SymInt& e : *sizes) dims.push_back(e.dim());
      return Shape(std::move(dims));
    }
    // Whole-number scales of a symbolic dim multiply it; other dims by the rule's floor.
    const Tensor* scales = n.inputs.size() > 2 ? constant_of(g, n.inputs[2]) : nullptr;
    if (scales == nullptr || scales->numel() != static_cast<int64_t>(x->rank()) ||
        scales->dtype() != DType::kF32)
      return std::nullopt;
    std::vector<Dim> dims;
    for (size_t i = 0; i < x->rank(); ++i) {
      const double s = scales->data<float>()[i];
      const Dim& d = (*x)[i];
      if (d.is_static())
        dims.emplace_back(static_cast<int64_t>(std::floor(static_cast<double>(d.value()) * s)));
      else if (s >= 1 && s == std::floor(s))
        dims.push_back((SymInt::of(d) * static_cast<int64_t>(s)).dim());
      else
        dims.push_back(Dim::unknown());
    }
    return Shape(std::move(dims));
  }
  if (op == "Slice" && n.inputs.size() >= 3 && g.opset() >= 10) {
    auto starts = operand(1), ends = operand(2);
    const bool has_axes = n.inputs.size() > 3 && n.inputs[3] >= 0;
    const bool has_steps = n.inputs.size() > 4 && n.inputs[4] >= 0;
    auto axes = has_axes ? operand(3) : std::nullopt;
    auto steps = has_steps ? operand(4) : std::nullopt;
    if (!starts || !ends || starts->size() != ends->size() || (has_axes && !axes) ||
        (has_steps && !steps))
      return std::nullopt;
    std::vector<Dim> dims = x->dims();
    const auto r = static_cast<int64_t>(x->rank());
    for (size_t k = 0; k < starts->size(); ++k) {
      const SymInt a = axes ? (*axes)[k] : SymInt(static_cast<int64_t>(k));
      const SymInt s = steps ? (*steps)[k] : SymInt(1);
      if (!a.is_number() || !s.is_number()) return std::nullopt;
      const auto axis = ops::try_normalize_axis(a.number(), r);
      if (!axis) return std::nullopt;
      const auto ax = static_cast<size_t>(*axis);
      const SymInt& b = (*starts)[k];
      const SymInt& e = (*ends)[k];
      if (b.is_number() && e.is_number()) {
        const std::vector<int64_t> st{s.number()};
        auto one =
            ops::slice_shape(std::vector<Dim>{(*x)[ax]}, {b.number()}, {e.number()}, nullptr, &st);
        if (!one) return std::nullopt;
        dims[ax] = (*one)[0];
      } else {
        dims[ax] = symbolic_slice((*x)[ax], b, e, s.number());
      }
    }
    return Shape(std::move(dims));
  }
  return std::nullopt;
}

}  // namespace hone::passes
