// Pools, Concat, Transpose and LayerNormalization over half-precision activations
// (storage.h): the plan_half() of create_misc's units and of the residual
// Add + LayerNormalization unit. Each writes bf16/f16, rank-4 values
// channels-last, and computes in f32 (kernels/half_ops.cu).
#include <algorithm>
#include <array>

#include "backends/cuda/kernels.h"
#include "backends/cuda/storage.h"
#include "ops/attrs.h"
#include "ops/axis.h"
#include "ops/broadcast.h"

namespace hone::cuda {
namespace {

const char* half_name(int half) {
  return half == kCudaR16BF ? "bf16" : "f16";
}

/// MaxPool, AveragePool (2-D), GlobalAveragePool and GlobalMaxPool of a half
/// NHWC input: one thread per output (channels fastest), or for the global
/// pools one block per image and 32 channels.
Result<OpPlan> plan_pool_half(const Node& n, const std::vector<dims_t>& in,
                              const std::vector<Storage>& have, int half) {
  const dims_t& x = in[0];
  if (have[0] != Storage::kHalf || x.size() != 4)
    return fail(ErrorCode::kUnsupported, "a pool of an f32 or non-2-D input");
  const bool global = n.op_type.starts_with("Global");
  const bool is_max = n.op_type.find("Max") != std::string::npos;
  const int bf16 = half == kCudaR16BF ? 1 : 0;
  OpPlan p;
  p.reads = {Storage::kHalf};
  p.writes = {Storage::kHalf};
  const std::string kind = std::string(half_name(half)) + ".cuda.nhwc";
  if (global) {
    p.outputs = {{x[0], x[1], 1, 1}};
    p.kernel = (is_max ? "globalmaxpool." : "globalavgpool.") + kind;
    const long long N = x[0], P = x[2] * x[3];
    const int C = static_cast<int>(x[1]), mx = is_max ? 1 : 0;
    const long long blocks = std::min<long long>(N * ((C + 31) / 32), 1 << 20);
    p.run = [=](const ExecCtx& c, const Bind& b) -> Result<void> {
      HONE_TRY(CUfunction f, c.fixed.function("hone_global_pool_nhwc_half"));
      CUdeviceptr xi = b.in[0], yo = b.out[0];
      long long nn = N, pp = P;
      int cc = C, m = mx, bf = bf16;
      return launch_grid(c.d, f, c.stream, static_cast<unsigned>(blocks), 1, 1, 32, 16,
                         {&xi, &yo, &nn, &cc, &pp, &m, &bf});
    };
    return p;
  }
  HONE_TRY(const PoolWindow pw, pool_window(n, x));
  p.outputs = {pw.out};
  p.kernel = (is_max ? "maxpool." : "avgpool.") + kind;
  const std::array<int, 16> args = pw.args;
  const long long N = x[0], total = numel_of(pw.out);
  const int C = static_cast<int>(x[1]);
  p.run = [=](const ExecCtx& c, const Bind& b) -> Result<void> {
    HONE_TRY(CUfunction f, c.fixed.function("hone_pool2d_nhwc_half"));
    CUdeviceptr xi = b.in[0], yo = b.out[0];
    long long nn = N;
    int cc = C, bf = bf16;
    std::array<int, 16> a = args;
    std::vector<void*> ptrs = {&xi, &yo, &nn, &cc};
    for (int& v : a) ptrs.push_back(&v);
    ptrs.push_back(&bf);
    return launch_1d(c.d, f, c.stream, total, ptrs);
  };
  return p;
}

/// Concat with a half input: every input read as half (f32 ones converted),
/// each copied into its place of the half output, in channels-last order
/// when the output is rank 4 (the axis moved with the dims).
Result<OpPlan> plan_concat_half(const Node& n, const std::vector<dims_t>& in,
                                const std::vector<Storage>& have, int half) {
  if (std::find(have.begin(), have.end(), Storage::kHalf) == have.end())
    return fail(ErrorCode::kUnsupported, "no half input");
  HONE_TRY(const auto shape, concat_dims(n, in));
  const dims_t out = shape.first;
  if (out.size() > static_cast<size_t>(kMaxRank))
    return fail(ErrorCode::kUnsupported, "rank " + std::to_string(out.size()));
  const bool nhwc = !channels_last_is_row_major(out);
  // Where the axis goes in [N, H, W, C].
  static constexpr int64_t kMoved[4] = {0, 3, 1, 2};
  const int64_t axis = nhwc ? kMoved[shape.second] : shape.second;
  std::vector<dims_t> phys;
  for (const dims_t& d : in) phys.push_back(nhwc ? channels_last_dims(d) : d);
  const dims_t pout = nhwc ? channels_last_dims(out) : out;
  OpPlan p;
  p.outputs = {out};
  p.reads.assign(in.size(), Storage::kHalf);
  p.writes = {Storage::kHalf};
  p.kernel =
      std::string("concat.") + half_name(half) + ".cuda.strided_copy" + (nhwc ? " nhwc" : "");
  const dims_t dst = strides_of(pout);
  p.run = [=](const ExecCtx& c, const Bind& b) -> Result<void> {
    int64_t offset = 0;
    for (size_t k = 0; k < phys.size(); ++k) {
      HONE_CHECK_OK(strided_copy_half(c, b.in[k], b.out[0] + static_cast<CUdeviceptr>(offset) * 2,
                                      phys[k], strides_of(phys[k]), dst));
      offset += phys[k][static_cast<size_t>(axis)] * dst[static_cast<size_t>(axis)];
    }
    return {};
  };
  return p;
}

/// LayerNormalization `n` of in = [x, scale, bias?], or with `residual` of
/// x + z for in = [x, z, scale, bias?] (`keep_sum`: x + z is an output too,
/// before the normalised one), over row-major rows: x and z read as they are
/// stored (f32 or half; the kernel takes either), every output half. Offered
/// for f32 inputs too: a transformer's half values start at its first
/// LayerNormalization, whose readers (products, attention) read half.
Result<OpPlan> plan_layernorm_half(const Node& n, const std::vector<dims_t>& in,
                                   const std::vector<Storage>& have, bool residual, bool keep_sum,
                                   int half, LnSwap sw) {
  const dims_t& x = in[0];
  if ((sw.z || sw.y) && x.size() != 3)
    return fail(ErrorCode::kInternal, "swapped LayerNormalization rows need rank 3");
  const size_t at = residual ? 2 : 1;  // scale
  for (size_t i = 0; i < at; ++i)
    if (have[i] == Storage::kHalf && !channels_last_is_row_major(in[i]))
      return fail(ErrorCode::kUnsupported, "a channels-last operand");
  const dims_t z = sw.z ? swap_leading(in[1]) : residual ? in[1] : dims_t{};
  if (residual && z != x) return fail(ErrorCode::kUnsupported, "a residual Add that broadcasts");
  HONE_TRY(const ops::NormAttrs na, ops::norm_attrs(n));
  const auto rank = static_cast<int64_t>(x.size());
  HONE_TRY(const int64_t axis, ops::normalize_axis(na.axis, rank, "LayerNormalization axis"));
  if ((sw.z || sw.y) && axis != 2)
    return fail(ErrorCode::kInternal, "swapped LayerNormalization rows need axis 2");
  long long rows = 1, r = 1;
  for (int64_t d = 0; d < rank; ++d) (d < axis ? rows : r) *= x[static_cast<size_t>(d)];
  const bool has_bias = in.size() > at + 1;
  if (numel_of(in[at]) != r || (has_bias && numel_of(in[at + 1]) != r))
    return fail(ErrorCode::kUnsupported, "LayerNormalization scale/bias that broadcast");
  const float eps = na.epsilon;
  const int xh = have[0] == Storage::kHalf ? 1 : 0;
  const int zh = residual && have[1] == Storage::kHalf ? 1 : 0;
  const bool warp = r % 4 == 0 && r <= 1024;
  const dims_t y = sw.y ? swap_leading(x) : x;
  const long long zb = sw.z ? x[1] : 0, yb = sw.y ? x[1] : 0;
  OpPlan p;
  p.outputs = keep_sum ? std::vector<dims_t>{x, y} : std::vector<dims_t>{y};
  p.reads.assign(in.size(), Storage::kF32);
  for (size_t i = 0; i < at; ++i) p.reads[i] = have[i];
  p.writes.assign(p.outputs.size(), Storage::kHalf);
  p.kernel = std::string(residual ? "add+layernorm." : "layernorm.") + half_name(half) + ".cuda." +
             (warp ? "warp" : "rows") + swap_note(sw);
  const int bf16 = half == kCudaR16BF ? 1 : 0;
  p.run = [=](const ExecCtx& c, const Bind& b) -> Result<void> {
    CUdeviceptr xi = b.in[0], zi = residual ? b.in[1] : 0, s = b.in[at];
    CUdeviceptr bi = has_bias ? b.in[at + 1] : 0, sum = keep_sum ? b.out[0] : 0;
    CUdeviceptr yo = b.out.back();
    long long ro = rows, rr = r, zs = zb, ys = yb;
    float e = eps;
    int xa = xh, za = zh, bf = bf16;
    // f32 operands load four elements as 16 bytes, half ones as 8.
    const bool aligned = ((s | bi) & 15) == 0 && ((sum | yo) & 7) == 0 &&
                         (xi & (xh ? 7 : 15)) == 0 && (zi & (zh ? 7 : 15)) == 0;
    if (warp && aligned) {
      HONE_TRY(CUfunction f, c.fixed.function("hone_layernorm_warp_half"));
      int ri = static_cast<int>(r);
      const long long blocks = std::min<long long>((rows + 7) / 8, 65535LL * 8);
      return launch(c.d, f, c.stream, static_cast<unsigned>(blocks), 256,
                    {&xi, &zi, &s, &bi, &sum, &yo, &ro, &ri, &e, &xa, &za, &bf, &zs, &ys});
    }
    HONE_TRY(CUfunction f, c.fixed.function("hone_layernorm_half"));
    return launch(c.d, f, c.stream, static_cast<unsigned>(std::min<long long>(rows, 65535)), 256,
                  {&xi, &zi, &s, &bi, &sum, &yo, &ro, &rr, &e, &xa, &za, &bf, &zs, &ys});
  };
  return p;
}

/// Transpose of a half value whose input and output are both row-major in
/// their storage (any rank but 4, or a rank-4 one that is row-major either
/// way): a strided copy of 2-byte elements (a transformer's [S, B, E] to [B,
/// S, E] between its products), rows moved as float4 where they allow it
/// (strided_copy_half).
Result<OpPlan> plan_transpose_half(const Node& n, const std::vector<dims_t>& in,
                                   const std::vector<Storage>& have, int half) {
  const dims_t& x = in[0];
  if (have[0] != Storage::kHalf || !channels_last_is_row_major(x))
    return fail(ErrorCode::kUnsupported, "an f32 or channels-last input");
  if (x.size() > static_cast<size_t>(kMaxRank))
    return fail(ErrorCode::kUnsupported, "rank " + std::to_string(x.size()));
  HONE_TRY(const dims_t perm, ops::transpose_perm(n, static_cast<int64_t>(x.size())));
  const dims_t xs = strides_of(x);
  dims_t out, src;
  for (int64_t d : perm) {
    out.push_back(x[static_cast<size_t>(d)]);
    src.push_back(xs[static_cast<size_t>(d)]);
  }
  if (!channels_last_is_row_major(out))
    return fail(ErrorCode::kUnsupported, "a rank-4 output " + shape_to_string(out));
  if (ops::transpose_keeps_order(x, perm)) {
    // Only axes of extent 1 move (a batch-1 [S, 1, E] to [1, S, E]): the
    // same bytes, no copy.
    OpPlan v = view(out, "transpose.view");
    v.reads = {Storage::kHalf};
    v.writes = {Storage::kHalf};
    return v;
  }
  const dims_t dst = strides_of(out);
  OpPlan p;
  p.outputs = {out};
  p.reads = {Storage::kHalf};
  p.writes = {Storage::kHalf};
  p.kernel = std::string("transpose.") + half_name(half) + ".cuda.strided_copy";
  p.run = [=](const ExecCtx& c, const Bind& b) {
    return strided_copy_half(c, b.in[0], b.out[0], out, src, dst);
  };
  return p;
}

}  // namespace

HalfPlanner add_layernorm_half_planner(const Node& ln, bool keep_sum, int half, LnSwap sw) {
  if (half == 0) return nullptr;
  return [ln, keep_sum, half, sw](const std::vector<dims_t>& in, const std::vector<Storage>& have,
                                  const PlanEnv&) {
    return plan_layernorm_half(ln, in, have, true, keep_sum, half, sw);
  };
}

HalfPlanner layernorm_half_planner(const Node& ln, int half, LnSwap sw) {
  if (half == 0) return nullptr;
  return [ln, half, sw](const std::vector<dims_t>& in, const std::vector<Storage>& have,
                        const PlanEnv&) {
    return plan_layernorm_half(ln, in, have, false, false, half, sw);
  };
}

HalfPlanner misc_half_planner(const Node& n, int half) {
  if (half == 0) return nullptr;
  const std::string& op = n.op_type;
  if (op == "Concat")
    return [n, half](const std::vector<dims_t>& in, const std::vector<Storage>& have,
                     const PlanEnv&) { return plan_concat_half(n, in, have, half); };
  if (op == "Transpose")
    return [n, half](const std::vector<dims_t>& in, const std::vector<Storage>& have,
                     const PlanEnv&) { return plan_transpose_half(n, in, have, half); };
  if (op == "MaxPool" || op == "AveragePool" || op == "GlobalAveragePool" || op == "GlobalMaxPool")
    return [n, half](const std::vector<dims_t>& in, const std::vector<Storage>& have,
                     const PlanEnv&) { return plan_pool_half(n, in, have, half); };
  return nullptr;
}

}  // namespace hone::cuda
