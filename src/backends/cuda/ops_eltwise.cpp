// Element-wise chains: a run of element-wise nodes, each the sole reader of
// the one before, becomes one generated CUDA kernel (NVRTC) that reads its
// operands with broadcasting and writes only the chain's last value. Dense
// ops' activations, bias adds and residual adds run this way, as their epilogue.
// Each chain has a second kernel that handles four elements of one row per
// step (float4 loads and stores): it runs when the output's innermost merged
// dim is a multiple of 4 and every operand is contiguous or constant along
// it, with 16-byte aligned pointers, which is what residual adds, GELUs and
// bias or per-channel broadcasts are; memory-bound chains reach about twice
// the bandwidth of the scalar kernel that way.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>

#include "backends/cuda/kernels.h"
#include "backends/cuda/op.h"
#include "backends/cuda/storage.h"
#include "ops/attrs.h"
#include "ops/unary.h"

namespace hone::cuda {
namespace {

/// An exact float literal, NaN and infinities included.
std::string literal(float v) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "__int_as_float(0x%08x)", std::bit_cast<uint32_t>(v));
  return buf;
}

/// Appends `m`'s op type, lower case, to a kernel id's comma-separated op list.
void append_op_name(std::string* ops, const Node& m) {
  std::string lower = m.op_type;
  for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  *ops += (ops->empty() ? "" : ",") + lower;
}

/// A constant f32 input holding one value, or nullptr.
const Tensor* scalar_const(const Graph& g, const Node& n, size_t i) {
  if (i >= n.inputs.size() || n.inputs[i] < 0) return nullptr;
  const Value& v = g.value(n.inputs[i]);
  if (!v.initializer || v.initializer->dtype() != DType::kF32 || v.initializer->numel() != 1)
    return nullptr;
  return &*v.initializer;
}

class ChainOp final : public Op {
 public:
  ChainOp(std::shared_ptr<ChainModule> m, std::string fn, std::string ops,
          std::vector<dims_t> literal_dims, int half)
      : module_(std::move(m)),
        fn_(std::move(fn)),
        fn4_(fn_ + "_v4"),
        fnh_(fn_ + "_h"),
        ops_(std::move(ops)),
        kernel_("eltwise.f32.cuda.nvrtc[" + ops_ + "]"),
        literal_dims_(std::move(literal_dims)),
        half_(half) {}

  Result<OpPlan> plan(const std::vector<dims_t>& in, const PlanEnv&) const override {
    if (in.size() > static_cast<size_t>(kMaxOperands))
      return fail(ErrorCode::kInternal, "element-wise chain with more than 8 operands");
    dims_t out;
    std::vector<dims_t> all = literal_dims_;
    all.insert(all.end(), in.begin(), in.end());
    for (const dims_t& d : all) {
      HONE_TRY(out, broadcast(out, d));
    }
    if (!module_->module) return fail(ErrorCode::kInternal, "chain module not compiled");
    HONE_TRY(CUfunction f, module_->module->function(fn_));
    HONE_TRY(CUfunction f4, module_->module->function(fn4_));
    HONE_TRY(const EwArgs args, ew_args(in, out));
    const dims_t cd(args.dims, args.dims + args.rank);
    std::vector<dims_t> cst(in.size());
    for (size_t k = 0; k < in.size(); ++k) cst[k].assign(args.st[k], args.st[k] + args.rank);
    const long long n = numel_of(out);
    // The float4 kernel: rows of a multiple of 4, and each operand read
    // contiguously along them (its other strides multiples of 4, so every
    // group of four starts 16-byte aligned) or constant along them.
    bool vec = !cd.empty() && cd.back() % 4 == 0;
    std::vector<bool> wide(in.size(), false);  // read as float4: its pointer must be aligned
    for (size_t k = 0; k < in.size() && vec; ++k) {
      if (args.flat[k]) {
        wide[k] = true;
        continue;
      }
      const int64_t inner = cst[k].back();
      if (inner == 1) {
        wide[k] = true;
        vec = std::all_of(cst[k].begin(), cst[k].end() - 1, [](int64_t v) { return v % 4 == 0; });
      } else {
        vec = inner == 0;
      }
    }
    OpPlan p;
    p.outputs = {out};
    p.kernel = kernel_;
    p.run = [f, f4, args, n, vec, wide](const ExecCtx& c, const Bind& b) -> Result<void> {
      EwArgs a = args;
      for (size_t k = 0; k < b.in.size(); ++k) a.in[k] = b.in[k];
      CUdeviceptr y = b.out[0];
      bool aligned = vec && y % 16 == 0;
      for (size_t k = 0; k < b.in.size() && aligned; ++k) aligned = !wide[k] || b.in[k] % 16 == 0;
      if (aligned) {
        long long groups = n / 4;
        return launch_1d(c.d, f4, c.stream, groups, {&y, &a, &groups});
      }
      long long count = n;
      return launch_1d(c.d, f, c.stream, n, {&y, &a, &count});
    };
    return p;
  }

  /// Half-precision activations (storage.h): offered when an operand is
  /// half. The output is half, in the channels-last order when it is rank
  /// 4: every operand is then indexed in that order, half rank-4 operands as
  /// they are stored, others whose row-major order is also their
  /// channels-last one (a per-channel constant, a pooled [N, C, 1, 1]) as
  /// they are, the rest read as half copies.
  Result<OpPlan> plan_half(const std::vector<dims_t>& in, const std::vector<Storage>& have,
                           const PlanEnv&) const override {
    if (std::find(have.begin(), have.end(), Storage::kHalf) == have.end())
      return fail(ErrorCode::kUnsupported, "no half operand");
    dims_t out;
    for (const dims_t& d : literal_dims_) {
      HONE_TRY(out, broadcast(out, d));
    }
    for (const dims_t& d : in) {
      HONE_TRY(out, broadcast(out, d));
    }
    if (out.size() > static_cast<size_t>(kMaxRank))
      return fail(ErrorCode::kUnsupported, "rank " + std::to_string(out.size()));
    if (!module_->module) return fail(ErrorCode::kInternal, "chain module not compiled");
    HONE_TRY(CUfunction f, module_->module->function(fnh_));
    const bool nhwc = !channels_last_is_row_major(out);
    std::vector<Storage> reads(have);
    std::vector<dims_t> ind(in);
    for (size_t k = 0; k < in.size(); ++k) {
      if (!nhwc) {
        // Row-major throughout: a channels-last half operand of another
        // order is read as an f32 copy (rank 4 into an output of rank 5).
        if (have[k] == Storage::kHalf && !channels_last_is_row_major(in[k]))
          reads[k] = Storage::kF32;
        continue;
      }
      dims_t r(in[k]);
      while (r.size() < 4) r.insert(r.begin(), 1);
      const bool half4 = in[k].size() == 4 && have[k] == Storage::kHalf;
      if (!half4 && !channels_last_is_row_major(r)) {
        // A row-major operand whose order differs from channels-last: a
        // rank-4 one is read as a half copy; a lower rank one is not read here.
        if (in[k].size() != 4)
          return fail(ErrorCode::kUnsupported,
                      "operand " + shape_to_string(in[k]) + " of a channels-last chain");
        reads[k] = Storage::kHalf;
      }
      ind[k] = channels_last_dims(in[k]);
    }
    HONE_TRY(const EwArgs args, ew_args(ind, nhwc ? channels_last_dims(out) : out));
    int halves = 0;
    for (size_t k = 0; k < reads.size(); ++k)
      if (reads[k] == Storage::kHalf) halves |= 1 << k;
    OpPlan p;
    p.outputs = {out};
    p.reads = std::move(reads);
    p.writes = {Storage::kHalf};
    p.kernel = std::string("eltwise.") + (half_ == kCudaR16BF ? "bf16" : "f16") + ".cuda.nvrtc[" +
               ops_ + "]" + (nhwc ? " nhwc" : "");
    const long long n = numel_of(out);
    const int bf16 = half_ == kCudaR16BF ? 1 : 0;
    p.run = [f, args, n, halves, bf16](const ExecCtx& c, const Bind& b) -> Result<void> {
      EwArgs a = args;
      for (size_t k = 0; k < b.in.size(); ++k) a.in[k] = b.in[k];
      CUdeviceptr y = b.out[0];
      long long count = n;
      int hm = halves, bf = bf16;
      return launch_1d(c.d, f, c.stream, n, {&y, &a, &count, &hm, &bf});
    };
    return p;
  }

 private:
  std::shared_ptr<ChainModule> module_;
  std::string fn_, fn4_, fnh_, ops_, kernel_;
  std::vector<dims_t> literal_dims_;
  int half_;
};

}  // namespace

Result<EwArgs> ew_args(const std::vector<dims_t>& in, const dims_t& out) {
  // Neighbouring dims that every operand reads contiguously (or not at
  // all) merge, and size-1 dims go: a bias over [S, B, C] indexes [S*B, C],
  // and each element pays for two coordinates instead of three.
  std::vector<dims_t> st(in.size());
  for (size_t k = 0; k < in.size(); ++k) st[k] = broadcast_strides(in[k], out);
  dims_t cd;
  std::vector<dims_t> cst(in.size());
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == 1) continue;
    bool merge = !cd.empty();
    for (size_t k = 0; k < in.size() && merge; ++k) merge = cst[k].back() == st[k][i] * out[i];
    if (merge)
      cd.back() *= out[i];
    else
      cd.push_back(out[i]);
    for (size_t k = 0; k < in.size(); ++k) {
      if (merge)
        cst[k].back() = st[k][i];
      else
        cst[k].push_back(st[k][i]);
    }
  }
  if (cd.size() > static_cast<size_t>(kMaxRank))
    return fail(ErrorCode::kUnsupported,
                "rank " + std::to_string(out.size()) + ", " + std::to_string(cd.size()) +
                    " once contiguous dims merge (cuda element-wise kernels index up to " +
                    std::to_string(kMaxRank) + " dims)");
  EwArgs args;
  args.rank = static_cast<int32_t>(cd.size());
  std::copy(cd.begin(), cd.end(), args.dims);
  for (size_t k = 0; k < in.size(); ++k) {
    std::copy(cst[k].begin(), cst[k].end(), args.st[k]);
    args.flat[k] = in[k] == out ? 1 : 0;
  }
  return args;
}

size_t eltwise_arity(const Node& n) {
  return n.op_type == "Clip" ? 1 : n.inputs.size();
}

std::string eltwise_expr(const Graph& g, const Node& n, const std::vector<std::string>& a) {
  const std::string& op = n.op_type;
  if (a.size() == 1) {
    const std::string& x = a[0];
    static const std::map<std::string, std::string> kCalls = {
        {"Sigmoid", "hone_sigmoid"},
        {"Tanh", "tanhf"},
        {"Exp", "expf"},
        {"Log", "logf"},
        {"Sqrt", "sqrtf"},
        {"Abs", "fabsf"},
        {"Erf", "erff"},
        {"Floor", "floorf"},
        {"Ceil", "ceilf"},
        {"Sin", "sinf"},
        {"Cos", "cosf"},
        {"Round", "rintf"}};  // rintf: halves to even, in the default rounding mode
    if (auto it = kCalls.find(op); it != kCalls.end()) return it->second + "(" + x + ")";
    if (op == "Relu") return "(" + x + " < 0.0f ? 0.0f : " + x + ")";  // NaN stays NaN
    if (op == "Neg") return "(-" + x + ")";
    // Sign keeps 0, -0 and NaN, as the reference's.
    if (op == "Sign") return "(" + x + " > 0.0f ? 1.0f : (" + x + " < 0.0f ? -1.0f : " + x + "))";
    if (op == "Mish") return "(" + x + " * tanhf(hone_softplus(" + x + ")))";
    if (op == "Identity") return x;
    if (op == "Reciprocal") return "(1.0f / " + x + ")";
    if (const ops::UnaryFormula* f = ops::find_unary(op)) {
      // The schema's formula and attribute defaults (ops/unary.h); values
      // it refuses (Celu's alpha 0) have no expression.
      const Result<ops::UnaryParams> p = ops::unary_params(n, *f);
      if (!p) return "";
      return ops::unary_c_expr(*f, x, literal(p->a), literal(p->b));
    }
    if (op == "Gelu") {
      const Result<ops::GeluApprox> approx = ops::gelu_approx(n);
      if (!approx) return "";
      return (*approx == ops::GeluApprox::kTanh ? "hone_gelu_tanh(" : "hone_gelu(") + x + ")";
    }
    if (op == "Clip") {
      float lo = -std::numeric_limits<float>::infinity(), hi = -lo;
      if (g.opset() < 11) {
        const ops::ClipAttrs c = ops::clip_attrs(n);
        lo = c.min;
        hi = c.max;
      } else {
        for (size_t i = 1; i < n.inputs.size() && i < 3; ++i) {
          if (n.inputs[i] < 0) continue;
          const Tensor* t = scalar_const(g, n, i);
          if (t == nullptr) return "";
          (i == 1 ? lo : hi) = t->data<float>()[0];
        }
      }
      return "(" + x + " < " + literal(lo) + " ? " + literal(lo) + " : (" + x + " > " +
             literal(hi) + " ? " + literal(hi) + " : " + x + "))";
    }
    return "";
  }
  if (a.size() == 2) {
    const std::string &x = a[0], &y = a[1];
    if (op == "Add") return "(" + x + " + " + y + ")";
    if (op == "Sub") return "(" + x + " - " + y + ")";
    if (op == "Mul") return "(" + x + " * " + y + ")";
    if (op == "Div") return "(" + x + " / " + y + ")";
    if (op == "Pow") return "powf(" + x + ", " + y + ")";
    if (op == "Max") return "fmaxf(" + x + ", " + y + ")";
    if (op == "Min") return "fminf(" + x + ", " + y + ")";
    if (op == "PRelu") return "(" + x + " < 0.0f ? " + y + " * " + x + " : " + x + ")";
  }
  // Where's condition reaches the device as 0.0f/1.0f (a bool constant or
  // host value, converted when uploaded: cuda_block.cpp, slot_for); one made
  // at run time is bool bytes, read by hone_where_bytes; integer branches: hone_where_sized.
  if (a.size() == 3 && op == "Where" && !tensor_op(g, n))
    return "(" + a[0] + " != 0.0f ? " + a[1] + " : " + a[2] + ")";
  return "";
}

Result<Unit> create_chain(BlockInfo& b, const Node& n, std::vector<NodeId>* absorbed) {
  const Graph& g = b.g;
  Unit u;
  std::map<ValueId, std::string> name_of;
  std::vector<dims_t> literal_dims;
  std::string loads, loads4, loadsh, lanes, body, ops;
  int temps = 0;
  // Names the value `v` has inside the kernel: a temporary of the chain, an
  // inlined one-value constant, or operand k (loaded with broadcasting).
  auto operand = [&](ValueId v) -> std::string {
    if (auto it = name_of.find(v); it != name_of.end()) return it->second;
    const Value& val = g.value(v);
    std::string name;
    if (val.initializer && val.initializer->dtype() == DType::kF32 &&
        val.initializer->numel() == 1) {
      name = literal(val.initializer->data<float>()[0]);
      literal_dims.push_back(val.initializer->shape());  // it still takes part in broadcasting
    } else {
      const std::string k = std::to_string(u.inputs.size());
      name = "a" + k;
      loads += "    const float " + name + " = hone_ld(p, " + k + ", i);\n";
      loads4 += "    const float4 v" + k + " = hone_ld4(p, " + k + ", i);\n";
      loadsh += "    const float " + name + " = hone_ldh(p, " + k + ", i, halves, bf16);\n";
      lanes += "      const float " + name + " = hone_lane(v" + k + ", l);\n";
      u.inputs.push_back(v);
    }
    name_of[v] = name;
    return name;
  };
  auto new_operands = [&](const Node& m) {
    size_t k = 0;
    for (size_t i = 0; i < eltwise_arity(m); ++i)
      if (!name_of.count(m.inputs[i]) && !scalar_const(g, m, i)) ++k;
    return k;
  };
  auto emit = [&](const Node& m) -> Result<void> {
    std::vector<std::string> args;
    for (size_t i = 0; i < eltwise_arity(m); ++i) args.push_back(operand(m.inputs[i]));
    const std::string e = eltwise_expr(g, m, args);
    if (e.empty()) return fail(ErrorCode::kInternal, "no CUDA expression for " + m.describe());
    const std::string t = "t" + std::to_string(temps++);
    body += "    const float " + t + " = " + e + ";\n";
    name_of[m.outputs[0]] = t;
    append_op_name(&ops, m);
    return {};
  };
  HONE_CHECK_OK(emit(n));
  u.label = n.describe();
  ValueId cur = n.outputs[0];
  for (NodeId c = b.sole_consumer(cur); c >= 0; c = b.sole_consumer(cur)) {
    const Node& m = g.node(c);
    std::vector<std::string> probe(eltwise_arity(m), "x");
    if (m.outputs.empty() || eltwise_expr(g, m, probe).empty()) break;
    if (u.inputs.size() + new_operands(m) > static_cast<size_t>(kMaxOperands)) break;
    HONE_CHECK_OK(emit(m));
    b.used[static_cast<size_t>(c)] = true;
    absorbed->push_back(c);
    u.label += "+" + m.op_type;
    cur = m.outputs[0];
  }
  u.outputs = {cur};
  ChainModule& cm = *b.chains;
  const std::string fn = "hone_chain_" + std::to_string(cm.next_id++);
  cm.source += "extern \"C\" __global__ void " + fn +
               "(float* out, HoneEw p, long long n) {\n  HONE_FOR(i, n) {\n" + loads + body +
               "    out[i] = " + name_of[cur] + ";\n  }\n}\n";
  // The same chain four elements at a time: i is a multiple of 4 in one row.
  std::string body4;
  for (size_t at = 0, nl; at < body.size(); at = nl + 1) {
    nl = body.find('\n', at);
    body4 += "  " + body.substr(at, nl - at + 1);
  }
  cm.source += "extern \"C\" __global__ void " + fn +
               "_v4(float* out, HoneEw p, long long groups) {\n  HONE_FOR(j, groups) {\n"
               "    const long long i = j * 4;\n" +
               loads4 + "    float r[4];\n#pragma unroll\n    for (int l = 0; l < 4; ++l) {\n" +
               lanes + body4 + "      r[l] = " + name_of[cur] +
               ";\n    }\n    *reinterpret_cast<float4*>(out + i) = "
               "make_float4(r[0], r[1], r[2], r[3]);\n  }\n}\n";
  // Over half-precision activations (storage.h): operands f32 or bf16/f16
  // (bit k of halves), the result bf16/f16. Only generated where they can
  // run (activations=half): other builds compile the chains as before.
  if (b.settings.math.half_activations)
    cm.source += "extern \"C\" __global__ void " + fn +
                 "_h(unsigned short* out, HoneEw p, long long n, int halves, int bf16) {\n"
                 "  HONE_FOR(i, n) {\n" +
                 loadsh + body + "    out[i] = hone_half_bits(" + name_of[cur] +
                 ", bf16);\n  }\n}\n";
  u.op =
      std::make_unique<ChainOp>(b.chains, fn, ops, std::move(literal_dims), b.settings.math.half);
  return u;
}

Result<std::string> half_chain_kernel(BlockInfo& b, ValueId from, const std::vector<NodeId>& chain,
                                      std::string* ops) {
  const Graph& g = b.g;
  std::map<ValueId, std::string> name_of{{from, "a0"}};
  std::string body;
  int temps = 0;
  ValueId last = from;
  for (NodeId id : chain) {
    const Node& m = g.node(id);
    std::vector<std::string> args;
    for (size_t i = 0; i < eltwise_arity(m); ++i) {
      if (auto it = name_of.find(m.inputs[i]); it != name_of.end())
        args.push_back(it->second);
      else if (const Tensor* c = scalar_const(g, m, i))
        args.push_back(literal(c->data<float>()[0]));
      else
        return fail(ErrorCode::kUnsupported,
                    m.describe() + " reads a value from outside the chain");
    }
    const std::string e = eltwise_expr(g, m, args);
    if (e.empty() || m.outputs.size() != 1)
      return fail(ErrorCode::kUnsupported, "no CUDA expression for " + m.describe());
    const std::string t = "t" + std::to_string(temps++);
    body += "      const float " + t + " = " + e + ";\n";
    name_of[m.outputs[0]] = t;
    last = m.outputs[0];
    append_op_name(ops, m);
  }
  ChainModule& cm = *b.chains;
  const std::string fn = "hone_hchain_" + std::to_string(cm.next_id++);
  // In place over groups of four bf16/f16 values (8 bytes), computed in f32.
  cm.source += "extern \"C\" __global__ void " + fn +
               "(unsigned short* y, long long groups, int bf16) {\n  HONE_FOR(j, groups) {\n"
               "    const uint2 w = reinterpret_cast<const uint2*>(y)[j];\n"
               "    const unsigned short h[4] = {(unsigned short)(w.x & 0xffffu), "
               "(unsigned short)(w.x >> 16), (unsigned short)(w.y & 0xffffu), "
               "(unsigned short)(w.y >> 16)};\n"
               "    unsigned r[4];\n#pragma unroll\n    for (int l = 0; l < 4; ++l) {\n"
               "      const float a0 = hone_half_value(h[l], bf16);\n" +
               body + "      r[l] = hone_half_bits(" + name_of[last] +
               ", bf16);\n    }\n"
               "    reinterpret_cast<uint2*>(y)[j] = make_uint2(r[0] | r[1] << 16, r[2] | r[3] << "
               "16);\n  }\n}\n";
  return fn;
}

// --- shape helpers ---------------------------------------------------------

int64_t numel_of(const dims_t& d) {
  int64_t n = 1;
  for (int64_t x : d) n *= x;
  return n;
}

Tensor bools_as_floats(const Tensor& t) {
  Tensor f = Tensor::zeros(DType::kF32, t.shape());
  const auto* b = static_cast<const uint8_t*>(t.raw());
  float* out = f.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) out[i] = b[i] != 0 ? 1.0f : 0.0f;
  return f;
}

namespace {

/// Fills a kernel's HoneShape from dims and strides (at most kMaxRank of them).
CopyShape copy_shape(const dims_t& dims, const dims_t& src, const dims_t& dst) {
  CopyShape s;
  s.rank = static_cast<int32_t>(dims.size());
  std::copy(dims.begin(), dims.end(), s.dims);
  std::copy(src.begin(), src.end(), s.src);
  std::copy(dst.begin(), dst.end(), s.dst);
  return s;
}

}  // namespace

Result<void> strided_copy(const ExecCtx& c, CUdeviceptr x, CUdeviceptr y, const dims_t& dims,
                          const dims_t& src, const dims_t& dst) {
  if (dims.size() > static_cast<size_t>(kMaxRank))
    return fail(ErrorCode::kUnsupported, "strided copy of rank " + std::to_string(dims.size()));
  long long n = numel_of(dims);
  if (n <= 0) return {};
  // Canonical form: size-1 dims dropped, and neighbours that are contiguous
  // on both sides merged, so a Transpose of [B, S, H, D] to [B, H, S, D] is
  // seen as rows of D and a plain copy as one row.
  dims_t d, sx, sy;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 1) continue;
    if (!d.empty() && sx.back() == src[i] * dims[i] && sy.back() == dst[i] * dims[i]) {
      d.back() *= dims[i];
      sx.back() = src[i];
      sy.back() = dst[i];
      continue;
    }
    d.push_back(dims[i]);
    sx.push_back(src[i]);
    sy.push_back(dst[i]);
  }
  const size_t r = d.size();
  const long long cap = std::max(1, c.d.multiprocessors()) * 32LL;
  if (r > 0 && sx.back() == 1 && sy.back() == 1 && d.back() >= 16 && d.back() <= INT32_MAX) {
    // Rows: the index arithmetic once per row, the row itself coalesced.
    int64_t len = d.back();
    dims_t od(d.begin(), d.end() - 1), osx(sx.begin(), sx.end() - 1), osy(sy.begin(), sy.end() - 1);
    // A long row (a plain copy is one) is cut into pieces of at most 4096, so
    // it spreads over the device instead of one block.
    if (len > 4096 && od.size() < static_cast<size_t>(kMaxRank)) {
      for (int64_t f = (len + 4095) / 4096, tries = 0; tries < 256 && f <= len / 16; ++f, ++tries)
        if (len % f == 0 && (len / f) % 4 == 0) {
          len /= f;
          od.push_back(f);
          osx.push_back(len);
          osy.push_back(len);
          break;
        }
    }
    int L = static_cast<int>(len);
    int vec = L % 4 == 0 && x % 16 == 0 && y % 16 == 0 &&
              std::all_of(osx.begin(), osx.end(), [](int64_t v) { return v % 4 == 0; }) &&
              std::all_of(osy.begin(), osy.end(), [](int64_t v) { return v % 4 == 0; });
    const int lw = vec ? L / 4 : L;
    // Threads across a row: whole warps for long rows; for short ones (a head
    // split's rows of 64 floats are 16 float4) a power of two that fits, so
    // several rows share a warp instead of half of it idling.
    unsigned bx = 1;
    if (lw >= 32) {
      bx = static_cast<unsigned>(std::min(256, (lw + 31) / 32 * 32));
    } else {
      while (bx < static_cast<unsigned>(lw)) bx *= 2;
    }
    const unsigned by = 256 / bx;
    long long rows = n / L;
    CopyShape s = copy_shape(od, osx, osy);
    HONE_TRY(CUfunction f, c.fixed.function("hone_copy_rows"));
    const auto blocks = static_cast<unsigned>(std::min((rows + by - 1) / by, cap));
    return launch_grid(c.d, f, c.stream, blocks, 1, 1, bx, by, {&x, &y, &s, &rows, &L, &vec});
  }
  if (r >= 2 && sy.back() == 1 && sx.back() != 1) {
    // A transpose of the innermost dim: 32x32 tiles between the source's
    // contiguous dim and the destination's.
    const auto k = static_cast<size_t>(std::find(sx.begin(), sx.end(), 1) - sx.begin());
    const int64_t a = k < r ? d[k] : 0, bl = d.back();
    if (k < r - 1 && a >= 16 && bl >= 16 && a <= INT32_MAX && bl <= INT32_MAX &&
        (a + 31) / 32 <= 65535) {
      dims_t bd, bsx, bsy;
      for (size_t i = 0; i + 1 < r; ++i)
        if (i != k) {
          bd.push_back(d[i]);
          bsx.push_back(sx[i]);
          bsy.push_back(sy[i]);
        }
      CopyShape s = copy_shape(bd, bsx, bsy);
      long long batches = n / (a * bl), da = sy[k], sb = sx.back();
      int A = static_cast<int>(a), B = static_cast<int>(bl);
      HONE_TRY(CUfunction f, c.fixed.function("hone_transpose_tiles"));
      return launch_grid(c.d, f, c.stream, static_cast<unsigned>((B + 31) / 32),
                         static_cast<unsigned>((A + 31) / 32),
                         static_cast<unsigned>(std::min<long long>(batches, 65535)), 32, 8,
                         {&x, &y, &s, &batches, &A, &B, &da, &sb});
    }
  }
  CopyShape s = copy_shape(dims, src, dst);
  HONE_TRY(CUfunction f, c.fixed.function("hone_strided_copy"));
  return launch_1d(c.d, f, c.stream, n, {&x, &y, &s, &n});
}

Result<void> strided_copy_half(const ExecCtx& c, CUdeviceptr x, CUdeviceptr y, const dims_t& dims,
                               const dims_t& src, const dims_t& dst) {
  if (dims.size() > static_cast<size_t>(kMaxRank))
    return fail(ErrorCode::kUnsupported, "strided copy of rank " + std::to_string(dims.size()));
  long long n = numel_of(dims);
  if (n <= 0) return {};
  // The innermost dim that is not 1: contiguous on both sides and even, with
  // every other stride even, is pairs of 2-byte elements moved as floats.
  size_t in = dims.size();
  while (in > 0 && dims[in - 1] == 1) --in;
  bool pairs = in > 0 && src[in - 1] == 1 && dst[in - 1] == 1 && dims[in - 1] % 2 == 0 &&
               x % 4 == 0 && y % 4 == 0;
  for (size_t i = 0; pairs && i + 1 < in; ++i)
    if (dims[i] > 1 && (src[i] % 2 != 0 || dst[i] % 2 != 0)) pairs = false;
  if (pairs) {
    dims_t d(dims.begin(), dims.begin() + static_cast<std::ptrdiff_t>(in)), sx(in), sy(in);
    for (size_t i = 0; i + 1 < in; ++i) {
      sx[i] = d[i] > 1 ? src[i] / 2 : 0;
      sy[i] = d[i] > 1 ? dst[i] / 2 : 0;
    }
    d[in - 1] /= 2;
    sx[in - 1] = sy[in - 1] = 1;
    return strided_copy(c, x, y, d, sx, sy);
  }
  HONE_TRY(CUfunction f, c.fixed.function("hone_strided_copy_half"));
  CopyShape s = copy_shape(dims, src, dst);
  return launch_1d(c.d, f, c.stream, n, {&x, &y, &s, &n});
}

}  // namespace hone::cuda
