// The random ops: RandomNormal, RandomUniform, their *Like forms, Bernoulli
// and Multinomial (op versions up to 22). No two runtimes draw the same
// numbers, so their outputs define no "right answer" to compare with; the
// reference draws them deterministically instead (a mt19937_64 seeded from
// the `seed` attribute, or from a fixed seed without one), so that every
// backend, which falls back to these kernels, computes the same values and a
// model holding them can still be checked and tuned.
#include <bit>
#include <cmath>
#include <limits>
#include <random>

#include "eval/kernel_util.h"
#include "eval/ops.h"

namespace hone::eval {
namespace {

/// The generator for one node: the `seed` attribute's bits, or a constant.
std::mt19937_64 engine(const Node& node) {
  const uint64_t seed =
      node.has_attr("seed") ? std::bit_cast<uint32_t>(node.attr_float("seed", 0.0f)) : 0x686f6e65u;
  return std::mt19937_64(seed);
}

/// The output type: the `dtype` attribute, else `fallback`.
Result<DType> out_dtype(const Node& node, DType fallback, const char* what) {
  if (!node.has_attr("dtype")) return fallback;
  auto t = dtype_from_onnx(node.attr_int("dtype", 1));
  if (!t) return fail(std::move(t).error().add_context(std::string(what) + " dtype"));
  return *t;
}

/// RandomNormal / RandomUniform (shape attribute) and their *Like forms
/// (the input's shape, and its type unless `dtype` says otherwise).
Result<void> random_fill(KernelContext& ctx, bool normal, bool like) {
  const Node& node = ctx.node();
  const char* op = normal ? (like ? "RandomNormalLike" : "RandomNormal")
                          : (like ? "RandomUniformLike" : "RandomUniform");
  std::vector<int64_t> shape;
  DType dtype = DType::kF32;
  if (like) {
    HONE_TRY(const Tensor* x, ctx.tensor(0));
    shape = x->shape();
    dtype = x->dtype();
  } else {
    if (!node.has_attr("shape"))
      return fail(ErrorCode::kInvalidArgument, std::string(op) + " needs the 'shape' attribute");
    shape = node.attr_ints("shape");
    for (int64_t d : shape)
      if (d < 0)
        return fail(ErrorCode::kInvalidArgument,
                    std::string(op) + " shape " + shape_to_string(shape) + " has a negative dim");
  }
  HONE_TRY(dtype, out_dtype(node, dtype, op));
  if (!is_floating(dtype))
    return fail(unsupported_dtype(dtype, "a floating-point type").add_context(op));
  HONE_CHECK_OK(check_result_size(shape, std::string(op) + " output"));
  std::mt19937_64 gen = engine(node);
  HostVector<double> v(static_cast<size_t>(shape_numel(shape)));
  if (normal) {
    std::normal_distribution<double> dist(node.attr_float("mean", 0.0f),
                                          node.attr_float("scale", 1.0f));
    for (double& e : v) e = dist(gen);
  } else {
    const double lo = node.attr_float("low", 0.0f), hi = node.attr_float("high", 1.0f);
    if (!(hi >= lo))
      return fail(ErrorCode::kInvalidArgument, std::string(op) + " needs high >= low");
    std::uniform_real_distribution<double> dist(lo, hi);
    for (double& e : v) e = dist(gen);
  }
  ctx.set_output(0, from_doubles(dtype, shape, v));
  return {};
}

/// Bernoulli: 1 with probability input[i], else 0, in the input's type or `dtype`.
Result<void> bernoulli(KernelContext& ctx) {
  HONE_TRY(const Tensor* p, ctx.tensor(0));
  if (!is_floating(p->dtype()))
    return fail(
        unsupported_dtype(p->dtype(), "a floating-point type").add_context("Bernoulli input"));
  HONE_TRY(const DType dtype, out_dtype(ctx.node(), p->dtype(), "Bernoulli"));
  std::mt19937_64 gen = engine(ctx.node());
  std::uniform_real_distribution<double> dist(0.0, 1.0);
  HostVector<double> v = to_doubles(*p);
  for (double& e : v) {
    if (!(e >= 0.0 && e <= 1.0))
      return fail(ErrorCode::kInvalidArgument,
                  "Bernoulli probabilities must lie in [0, 1], got " + std::to_string(e));
    e = dist(gen) < e ? 1.0 : 0.0;
  }
  ctx.set_output(0, from_doubles(dtype, p->shape(), v));
  return {};
}

/// Multinomial: sample_size class indices per batch row, drawn from the
/// softmax of the row's unnormalized log-probabilities.
Result<void> multinomial(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  const Node& node = ctx.node();
  if (x->rank() != 2 || !is_floating(x->dtype()))
    return fail(
        ErrorCode::kInvalidArgument,
        "Multinomial input must be a float [batch_size, class_size] tensor, got " + x->describe());
  const int64_t samples = node.attr_int("sample_size", 1);
  if (samples < 0)
    return fail(ErrorCode::kInvalidArgument, "Multinomial sample_size must not be negative");
  HONE_TRY(const DType dtype, out_dtype(node, DType::kI32, "Multinomial"));
  if (dtype != DType::kI32 && dtype != DType::kI64)
    return fail(ErrorCode::kInvalidArgument, "Multinomial dtype must be int32 or int64");
  const int64_t batch = x->dim(0), classes = x->dim(1);
  HONE_CHECK_OK(check_result_size({batch, samples}, "Multinomial output"));
  const HostVector<double> logits = to_doubles(*x);
  std::mt19937_64 gen = engine(node);
  HostVector<double> out(static_cast<size_t>(batch * samples));
  std::vector<double> weights(static_cast<size_t>(classes));
  for (int64_t b = 0; b < batch; ++b) {
    const double* row = logits.data() + b * classes;
    double mx = -std::numeric_limits<double>::infinity();
    for (int64_t c = 0; c < classes; ++c) mx = std::max(mx, row[c]);
    for (int64_t c = 0; c < classes; ++c) weights[static_cast<size_t>(c)] = std::exp(row[c] - mx);
    if (classes == 0 || !std::isfinite(mx))
      return fail(ErrorCode::kInvalidArgument,
                  "Multinomial row " + std::to_string(b) + " has no finite log-probability");
    std::discrete_distribution<int64_t> dist(weights.begin(), weights.end());
    for (int64_t s = 0; s < samples; ++s)
      out[static_cast<size_t>(b * samples + s)] = static_cast<double>(dist(gen));
  }
  ctx.set_output(0, from_doubles(dtype, {batch, samples}, out));
  return {};
}

}  // namespace

void register_random_ops(OpRegistry& r) {
  r.add("RandomNormal", [](KernelContext& ctx) { return random_fill(ctx, true, false); });
  r.add("RandomNormalLike", [](KernelContext& ctx) { return random_fill(ctx, true, true); });
  r.add("RandomUniform", [](KernelContext& ctx) { return random_fill(ctx, false, false); });
  r.add("RandomUniformLike", [](KernelContext& ctx) { return random_fill(ctx, false, true); });
  r.add("Bernoulli", bernoulli);
  r.add("Multinomial", multinomial);
}

}  // namespace hone::eval
