// The transformer ops of ONNX opset 23+: Attention (23; 24 adds
// nonpad_kv_seqlen, 25 the sliding window) and RotaryEmbedding (23).
// Everything is computed in double and rounded once to the output type, so
// softmax_precision (which only asks for at least that precision) needs no
// separate path.
#include <algorithm>
#include <cmath>
#include <limits>

#include "eval/kernel_util.h"
#include "eval/ops_nn_internal.h"
#include "ops/attrs.h"

namespace hone::eval::nn {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

/// Q, K or V as [batch, heads, seq, head_size] doubles. A 3-D input
/// [batch, seq, heads * head_size] is split into `heads` heads.
struct Heads {
  int64_t batch = 0, heads = 0, seq = 0, size = 0;
  HostVector<double> v;
};

Result<Heads> to_heads(const Tensor& t, int64_t heads_attr, const char* what) {
  Heads r;
  if (t.rank() == 4) {
    r = {t.dim(0), t.dim(1), t.dim(2), t.dim(3), to_doubles(t)};
    return r;
  }
  if (heads_attr <= 0 || t.dim(2) % heads_attr != 0)
    return fail(ErrorCode::kInvalidArgument,
                std::string("Attention ") + what + " " + t.describe() +
                    ": a 3-D input needs q_num_heads and kv_num_heads attributes that divide its "
                    "hidden size");
  r.batch = t.dim(0);
  r.heads = heads_attr;
  r.seq = t.dim(1);
  r.size = t.dim(2) / heads_attr;
  const HostVector<double> in = to_doubles(t);
  r.v.resize(in.size());
  // [b, s, h, d] -> [b, h, s, d]
  for (int64_t b = 0; b < r.batch; ++b)
    for (int64_t s = 0; s < r.seq; ++s)
      for (int64_t h = 0; h < r.heads; ++h)
        for (int64_t d = 0; d < r.size; ++d)
          r.v[static_cast<size_t>(((b * r.heads + h) * r.seq + s) * r.size + d)] =
              in[static_cast<size_t>(((b * r.seq + s) * r.heads + h) * r.size + d)];
  return r;
}

/// Appends `cur` to `past` along the sequence axis (the KV cache update).
Result<Heads> concat_seq(const Tensor& past_t, const Heads& cur, const char* what) {
  if (past_t.rank() != 4 || past_t.dim(0) != cur.batch || past_t.dim(1) != cur.heads ||
      past_t.dim(3) != cur.size)
    return fail(ErrorCode::kInvalidArgument,
                std::string("Attention ") + what + " " + past_t.describe() + " must be [" +
                    std::to_string(cur.batch) + ", " + std::to_string(cur.heads) +
                    ", past_sequence_length, " + std::to_string(cur.size) + "]");
  const HostVector<double> past = to_doubles(past_t);
  Heads r{cur.batch, cur.heads, past_t.dim(2) + cur.seq, cur.size, {}};
  r.v.resize(static_cast<size_t>(r.batch * r.heads * r.seq * r.size));
  const int64_t p = past_t.dim(2);
  for (int64_t bh = 0; bh < r.batch * r.heads; ++bh) {
    std::copy_n(past.data() + bh * p * r.size, p * r.size, r.v.data() + bh * r.seq * r.size);
    std::copy_n(cur.v.data() + bh * cur.seq * cur.size, cur.seq * cur.size,
                r.v.data() + bh * r.seq * r.size + p * r.size);
  }
  return r;
}

Tensor heads_tensor(DType dtype, const Heads& h) {
  return from_doubles(dtype, {h.batch, h.heads, h.seq, h.size}, h.v);
}

Result<void> attention(KernelContext& ctx) {
  const Node& node = ctx.node();
  HONE_TRY(const Tensor* q_t, ctx.tensor(0));
  HONE_TRY(const Tensor* k_t, ctx.tensor(1));
  HONE_TRY(const Tensor* v_t, ctx.tensor(2));
  const size_t rank = q_t->rank();
  if ((rank != 3 && rank != 4) || k_t->rank() != rank || v_t->rank() != rank)
    return fail(ErrorCode::kInvalidArgument,
                "Attention Q, K and V must all be 3-D or all 4-D, got " + q_t->describe() + ", " +
                    k_t->describe() + ", " + v_t->describe());
  if (!is_floating(q_t->dtype()))
    return fail(
        unsupported_dtype(q_t->dtype(), "a floating-point type").add_context("Attention Q"));
  const auto [q_heads_attr, kv_heads_attr] = ops::attention_heads(node);
  HONE_TRY(Heads q, to_heads(*q_t, q_heads_attr, "Q"));
  HONE_TRY(Heads k, to_heads(*k_t, kv_heads_attr, "K"));
  HONE_TRY(Heads v, to_heads(*v_t, kv_heads_attr, "V"));
  if (k.batch != q.batch || v.batch != q.batch || k.size != q.size || v.heads != k.heads ||
      v.seq != k.seq || k.heads <= 0 || q.heads % k.heads != 0)
    return fail(ErrorCode::kInvalidArgument,
                "Attention Q " + q_t->describe() + ", K " + k_t->describe() + " and V " +
                    v_t->describe() +
                    " do not agree: the batch, K/V heads and sequence, and Q/K head size must "
                    "match, and the K/V heads must divide the Q heads");

  const bool has_past = ctx.has_input(4) || ctx.has_input(5);
  if (has_past && !(ctx.has_input(4) && ctx.has_input(5)))
    return fail(ErrorCode::kInvalidArgument, "Attention past_key and past_value go together");
  int64_t past_len = 0;
  if (has_past) {
    past_len = ctx.input(4).rank() == 4 ? ctx.input(4).dim(2) : 0;
    HONE_TRY(k, concat_seq(ctx.input(4), k, "past_key"));
    HONE_TRY(v, concat_seq(ctx.input(5), v, "past_value"));
  }
  const int64_t B = q.batch, Hq = q.heads, Hkv = k.heads, Sq = q.seq, T = k.seq, D = q.size,
                Dv = v.size, group = Hq / Hkv;

  std::vector<int64_t> nonpad;
  if (ctx.has_input(6)) {
    if (has_past)
      return fail(ErrorCode::kInvalidArgument,
                  "Attention nonpad_kv_seqlen cannot be used with past_key/past_value");
    HONE_TRY(nonpad, read_int_list(ctx.input(6), "Attention nonpad_kv_seqlen"));
    if (static_cast<int64_t>(nonpad.size()) != B)
      return fail(ErrorCode::kInvalidArgument, "Attention nonpad_kv_seqlen " +
                                                   ctx.input(6).describe() + " must have " +
                                                   std::to_string(B) + " (batch) values");
  }

  // The mask broadcasts to [B, Hq, Sq, T]; a shorter last dim is padded with
  // -inf (false for a bool mask).
  HostVector<double> mask;
  std::vector<int64_t> mask_map;
  int64_t mask_len = 0;
  bool bool_mask = false;
  if (ctx.has_input(3)) {
    const Tensor& m = ctx.input(3);
    bool_mask = m.dtype() == DType::kBool;
    if (m.rank() == 0 || m.rank() > 4 || m.dim(m.rank() - 1) > T)
      return fail(ErrorCode::kInvalidArgument,
                  "Attention attn_mask " + m.describe() + " must broadcast to [" +
                      std::to_string(B) + ", " + std::to_string(Hq) + ", " + std::to_string(Sq) +
                      ", " + std::to_string(T) + "]");
    mask_len = m.dim(m.rank() - 1);
    std::vector<int64_t> target{B, Hq, Sq, mask_len};
    auto bs = broadcast_shapes({m.shape(), target});
    if (!bs || *bs != target)
      return fail(ErrorCode::kInvalidArgument, "Attention attn_mask " + m.describe() +
                                                   " does not broadcast to " +
                                                   shape_to_string(target));
    mask_map = broadcast_index_map(m.shape(), target);
    mask = to_doubles(m);
  }

  // Default 1/sqrt(head_size); an empty head makes every score 0 whatever the scale.
  const double scale = node.has_attr("scale") ? node.attr_float("scale", 1.0f)
                       : D > 0                ? 1.0 / std::sqrt(static_cast<double>(D))
                                              : 1.0;
  const double softcap = node.attr_float("softcap", 0.0f);
  const bool causal = node.attr_int("is_causal", 0) != 0;
  const int64_t left = ctx.opset() >= 25 ? node.attr_int("left_window_size", -1) : -1;
  const int64_t right = ctx.opset() >= 25 ? node.attr_int("right_window_size", -1) : -1;
  const int64_t qk_mode = node.attr_int("qk_matmul_output_mode", 0);
  if (qk_mode < 0 || qk_mode > 3)
    return fail(ErrorCode::kInvalidArgument,
                "Attention qk_matmul_output_mode must be 0 to 3, got " + std::to_string(qk_mode));
  const bool want_qk = ctx.wants_output(3);

  HONE_CHECK_OK(check_result_size({B, Hq, Sq, Dv}, "Attention output"));
  if (want_qk) HONE_CHECK_OK(check_result_size({B, Hq, Sq, T}, "Attention qk_matmul_output"));
  HostVector<double> y(static_cast<size_t>(B * Hq * Sq * Dv), 0.0);
  HostVector<double> qk_out(want_qk ? static_cast<size_t>(B * Hq * Sq * T) : 0, 0.0);
  // The KV cache goes out as it came in, before the scaling below.
  if (ctx.wants_output(1)) ctx.set_output(1, heads_tensor(k_t->dtype(), k));
  if (ctx.wants_output(2)) ctx.set_output(2, heads_tensor(v_t->dtype(), v));
  // The spec scales Q and K by sqrt(scale) each to keep low-precision
  // products in range; in double, scaling Q alone is the same product (and
  // a negative scale stays defined).
  for (double& e : q.v) e *= scale;
  ctx.pool().parallel_for(B * Hq * Sq, [&](int64_t begin, int64_t end) {
    std::vector<double> score(static_cast<size_t>(T));
    for (int64_t row = begin; row < end; ++row) {
      const int64_t i = row % Sq, h = (row / Sq) % Hq, b = row / (Sq * Hq), hk = h / group;
      const double* qrow = q.v.data() + row * D;  // q is [B, Hq, Sq, D]: row-major rows
      const double* kbase = k.v.data() + (b * Hkv + hk) * T * D;
      // Count of valid keys before this query block: the frontier of the
      // causal mask and the window is relative to it.
      const int64_t offset = nonpad.empty() ? past_len : nonpad[static_cast<size_t>(b)] - Sq;
      bool any = false;
      for (int64_t j = 0; j < T; ++j) {
        double bj = 0.0;
        if (!mask.empty()) {
          if (j >= mask_len) {
            bj = kNegInf;
          } else {
            const double m = mask[static_cast<size_t>(
                mask_map[static_cast<size_t>(((b * Hq + h) * Sq + i) * mask_len + j)])];
            bj = bool_mask ? (m != 0.0 ? 0.0 : kNegInf) : m;
          }
        }
        const int64_t diff = i + offset - j;  // how far key j lies left of the query
        if (causal && diff < 0) bj = kNegInf;
        if (left >= 0 && diff > left) bj = kNegInf;
        if (right >= 0 && -diff > right) bj = kNegInf;
        if (!nonpad.empty() && j >= nonpad[static_cast<size_t>(b)]) bj = kNegInf;
        any = any || bj != kNegInf;
        // A key masked out costs no dot product unless the raw scores are wanted.
        if (bj == kNegInf && !want_qk) {
          score[static_cast<size_t>(j)] = kNegInf;
          continue;
        }
        const double* krow = kbase + j * D;
        double s = 0.0;
        for (int64_t d = 0; d < D; ++d) s += qrow[d] * krow[d];
        double* out_qk = want_qk ? &qk_out[static_cast<size_t>(row * T + j)] : nullptr;
        if (out_qk && qk_mode == 0) *out_qk = s;
        if (softcap > 0.0) s = softcap * std::tanh(s / softcap);
        if (out_qk && qk_mode == 1) *out_qk = s;
        s += bj;
        if (out_qk && qk_mode == 2) *out_qk = s;
        score[static_cast<size_t>(j)] = s;
      }
      // A row with no key to attend gives zeros, not NaN.
      if (!any) {
        if (want_qk && qk_mode == 3) std::fill_n(qk_out.data() + row * T, T, 0.0);
        continue;
      }
      double mx = kNegInf;
      for (double s : score) mx = std::max(mx, s);
      double sum = 0.0;
      for (double& s : score) {
        s = std::exp(s - mx);
        sum += s;
      }
      for (double& s : score) s /= sum;
      if (want_qk && qk_mode == 3) std::copy(score.begin(), score.end(), qk_out.data() + row * T);
      double* out = y.data() + row * Dv;
      const double* vbase = v.v.data() + (b * Hkv + hk) * T * Dv;
      for (int64_t j = 0; j < T; ++j) {
        const double p = score[static_cast<size_t>(j)];
        if (p == 0.0) continue;
        const double* vrow = vbase + j * Dv;
        for (int64_t d = 0; d < Dv; ++d) out[d] += p * vrow[d];
      }
    }
  });

  const DType dtype = q_t->dtype();
  if (rank == 4) {
    ctx.set_output(0, from_doubles(dtype, {B, Hq, Sq, Dv}, y));
  } else {
    HostVector<double> y3(y.size());
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < Hq; ++h)
        for (int64_t s = 0; s < Sq; ++s)
          std::copy_n(y.data() + ((b * Hq + h) * Sq + s) * Dv, Dv,
                      y3.data() + (b * Sq + s) * Hq * Dv + h * Dv);
    ctx.set_output(0, from_doubles(dtype, {B, Sq, Hq * Dv}, y3));
  }
  if (want_qk) ctx.set_output(3, from_doubles(dtype, {B, Hq, Sq, T}, qk_out));
  return {};
}

/// RotaryEmbedding-23: rotates the first rotary_embedding_dim features of
/// each head by the angle whose cos and sin the caches hold for its position.
Result<void> rotary_embedding(KernelContext& ctx) {
  const Node& node = ctx.node();
  HONE_TRY(const Tensor* x_t, ctx.tensor(0));
  HONE_TRY(const Tensor* cos_t, ctx.tensor(1));
  HONE_TRY(const Tensor* sin_t, ctx.tensor(2));
  if (!is_floating(x_t->dtype()))
    return fail(
        unsupported_dtype(x_t->dtype(), "a floating-point type").add_context("RotaryEmbedding X"));
  const bool interleaved = node.attr_int("interleaved", 0) != 0;
  const int64_t num_heads = node.attr_int("num_heads", 0);
  // Index x as [b, s, h, d] whatever its layout: 4-D is [b, h, s, d], 3-D [b, s, h*d].
  int64_t B, S, H, Dh;
  bool four_d = x_t->rank() == 4;
  if (four_d) {
    B = x_t->dim(0), H = x_t->dim(1), S = x_t->dim(2), Dh = x_t->dim(3);
  } else if (x_t->rank() == 3) {
    if (num_heads <= 0 || x_t->dim(2) % num_heads != 0)
      return fail(ErrorCode::kInvalidArgument,
                  "RotaryEmbedding with a 3-D input " + x_t->describe() +
                      " needs a num_heads attribute that divides its hidden size");
    B = x_t->dim(0), S = x_t->dim(1), H = num_heads, Dh = x_t->dim(2) / num_heads;
  } else {
    return fail(ErrorCode::kInvalidArgument,
                "RotaryEmbedding input " + x_t->describe() + " must be 3-D or 4-D");
  }
  int64_t rot = node.attr_int("rotary_embedding_dim", 0);
  if (rot == 0) rot = Dh;
  if (rot < 0 || rot > Dh || rot % 2 != 0)
    return fail(ErrorCode::kInvalidArgument, "RotaryEmbedding rotary_embedding_dim " +
                                                 std::to_string(rot) +
                                                 " must be even and at most "
                                                 "the head size " +
                                                 std::to_string(Dh));
  const int64_t half = rot / 2;
  // The caches are [B, S, half], or [max_position, half] read at position_ids[b, s].
  std::vector<int64_t> pos;
  if (ctx.has_input(3)) {
    const Tensor& p = ctx.input(3);
    if (p.rank() != 2 || p.dim(0) != B || p.dim(1) != S)
      return fail(ErrorCode::kInvalidArgument, "RotaryEmbedding position_ids " + p.describe() +
                                                   " must be [" + std::to_string(B) + ", " +
                                                   std::to_string(S) + "]");
    pos = to_int64s(p);
    if (cos_t->rank() != 2 || sin_t->shape() != cos_t->shape() || cos_t->dim(1) != half)
      return fail(ErrorCode::kInvalidArgument, "RotaryEmbedding cos_cache " + cos_t->describe() +
                                                   " and sin_cache " + sin_t->describe() +
                                                   " must both be [max_position_id + 1, " +
                                                   std::to_string(half) + "] with position_ids");
    for (int64_t id : pos)
      if (id < 0 || id >= cos_t->dim(0))
        return fail(ErrorCode::kInvalidArgument,
                    "RotaryEmbedding position id " + std::to_string(id) +
                        " is outside the caches' " + std::to_string(cos_t->dim(0)) + " rows");
  } else if (cos_t->rank() != 3 || sin_t->shape() != cos_t->shape() || cos_t->dim(0) != B ||
             cos_t->dim(1) != S || cos_t->dim(2) != half) {
    return fail(ErrorCode::kInvalidArgument,
                "RotaryEmbedding cos_cache " + cos_t->describe() + " and sin_cache " +
                    sin_t->describe() + " must both be [" + std::to_string(B) + ", " +
                    std::to_string(S) + ", " + std::to_string(half) + "] without position_ids");
  }
  const HostVector<double> cs = to_doubles(*cos_t), sn = to_doubles(*sin_t);
  HostVector<double> x = to_doubles(*x_t);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < S; ++s) {
      const int64_t row = pos.empty() ? b * S + s : pos[static_cast<size_t>(b * S + s)];
      const double* c = cs.data() + row * half;
      const double* sv = sn.data() + row * half;
      for (int64_t h = 0; h < H; ++h) {
        double* p = x.data() + (four_d ? ((b * H + h) * S + s) * Dh : ((b * S + s) * H + h) * Dh);
        for (int64_t k = 0; k < half; ++k) {
          // Pairs are (2k, 2k+1) interleaved, else (k, k + half).
          double& x1 = interleaved ? p[2 * k] : p[k];
          double& x2 = interleaved ? p[2 * k + 1] : p[k + half];
          const double a = x1, bb = x2;
          x1 = c[k] * a - sv[k] * bb;
          x2 = sv[k] * a + c[k] * bb;
        }
      }
    }
  ctx.set_output(0, from_doubles(x_t->dtype(), x_t->shape(), x));
  return {};
}

}  // namespace

void register_attention_ops(OpRegistry& r) {
  r.add("Attention", attention);
  r.add("RotaryEmbedding", rotary_embedding);
}

}  // namespace hone::eval::nn
