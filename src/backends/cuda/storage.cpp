// Half-precision activations (storage.h): the conversions between storages,
// and the Program builder's choice of storage per value.
#include "backends/cuda/storage.h"

#include <algorithm>

#include "core/log.h"

namespace hone::cuda {
namespace {

/// Channel counts below this convert element by element (the *_rows kernels),
/// not in 32x32 tiles, most of which they would leave idle.
constexpr int64_t kMinTiledChannels = 16;

/// Launches a 32x32-tile kernel of kernels/fixed.cu (block 32 x 8, grid-stride over
/// `tiles` tiles on gridDim.x alone).
Result<void> launch_tiles(const ExecCtx& c, CUfunction f, int64_t tiles, std::vector<void*> args) {
  const auto blocks = static_cast<unsigned>(std::min<int64_t>(tiles, int64_t{1} << 20));
  return launch_grid(c.d, f, c.stream, blocks, 1, 1, 32, 8, std::move(args));
}

int64_t tiles_of(int64_t n, int64_t channels, int64_t positions) {
  return n * ((channels + 31) / 32) * ((positions + 31) / 32);
}

/// The conversion kernel's id in the kernel plan.
std::string convert_kernel(Storage from, Storage to, int half, const dims_t& dims) {
  const std::string h = half == kCudaR16BF ? "bf16" : "f16";
  const bool nhwc = !channels_last_is_row_major(dims);
  if (to == Storage::kHalf)
    return std::string("convert.f32_to_") + h + (nhwc ? "_nhwc.cuda.tiles" : ".cuda.flat");
  (void)from;
  return "convert." + h + (nhwc ? "_nhwc" : "") + "_to_f32.cuda." + (nhwc ? "tiles" : "flat");
}

}  // namespace

bool channels_last_is_row_major(const dims_t& d) {
  return d.size() != 4 || d[1] == 1 || d[2] * d[3] == 1;
}

dims_t channels_last_dims(const dims_t& d) {
  dims_t r(d);
  while (r.size() < 4) r.insert(r.begin(), 1);
  return {r[0], r[2], r[3], r[1]};
}

DType half_dtype(int half) {
  return half == kCudaR16BF ? DType::kBF16 : DType::kF16;
}

std::string storage_name(Storage s, int half, const dims_t& dims) {
  const bool four = dims.size() == 4;
  if (s == Storage::kF32) return four ? "f32 NCHW" : "f32";
  return std::string(half == kCudaR16BF ? "bf16" : "f16") + (four ? " NHWC" : "");
}

Result<void> to_nhwc_half(const ExecCtx& c, CUdeviceptr x, CUdeviceptr y, int64_t N, int64_t C,
                          int64_t P, int half) {
  long long n = N, p = P;
  int ch = static_cast<int>(C), bf16 = half == kCudaR16BF ? 1 : 0;
  if (C < kMinTiledChannels) {
    HONE_TRY(CUfunction f, c.fixed.function("hone_to_nhwc_half_rows"));
    long long count = N * C * P;
    return launch_1d(c.d, f, c.stream, count, {&x, &y, &count, &ch, &p, &bf16});
  }
  HONE_TRY(CUfunction f, c.fixed.function("hone_to_nhwc_half"));
  return launch_tiles(c, f, tiles_of(N, C, P), {&x, &y, &n, &ch, &p, &bf16});
}

Result<void> nhwc_half_epilogue(const ExecCtx& c, CUdeviceptr yh, CUdeviceptr out, CUdeviceptr bias,
                                CUdeviceptr z, int64_t N, int64_t M, int64_t P, bool relu,
                                int half) {
  long long n = N, p = P;
  int m = static_cast<int>(M), r = relu ? 1 : 0, bf16 = half == kCudaR16BF ? 1 : 0;
  if (M < kMinTiledChannels) {
    HONE_TRY(CUfunction f, c.fixed.function("hone_nhwc_half_epilogue_rows"));
    long long count = N * M * P;
    return launch_1d(c.d, f, c.stream, count, {&yh, &out, &bias, &z, &count, &m, &p, &r, &bf16});
  }
  HONE_TRY(CUfunction f, c.fixed.function("hone_nhwc_half_epilogue"));
  return launch_tiles(c, f, tiles_of(N, M, P), {&yh, &out, &bias, &z, &n, &m, &p, &r, &bf16});
}

Result<void> convert_storage(const ExecCtx& c, CUdeviceptr x, Storage from, CUdeviceptr y,
                             Storage to, const dims_t& dims, int half) {
  if (from == to) return fail(ErrorCode::kInternal, "a conversion to the storage it has");
  const bool nhwc = !channels_last_is_row_major(dims);
  const int64_t n = numel_of(dims);
  if (to == Storage::kHalf) {
    if (nhwc) return to_nhwc_half(c, x, y, dims[0], dims[1], dims[2] * dims[3], half);
    HONE_TRY(CUdeviceptr done, to_half(c, x, n, y, half));
    (void)done;
    return {};
  }
  if (nhwc)
    return nhwc_half_epilogue(c, x, y, 0, 0, dims[0], dims[1], dims[2] * dims[3], false, half);
  HONE_TRY(CUfunction f, c.fixed.function("hone_from_half"));
  long long count = n;
  int bf16 = half == kCudaR16BF ? 1 : 0;
  return launch_1d(c.d, f, c.stream, std::max<long long>((count + 3) / 4, 1),
                   {&x, &y, &count, &bf16});
}

Result<void> half_bias_act(const ExecCtx& c, CUdeviceptr y, CUdeviceptr bias, CUdeviceptr z,
                           int64_t n, int64_t C, bool relu, int half) {
  HONE_TRY(CUfunction f, c.fixed.function("hone_half_bias_act"));
  long long count = n;
  int ch = static_cast<int>(C), r = relu ? 1 : 0, bf16 = half == kCudaR16BF ? 1 : 0;
  int vec = C % 4 == 0 && y % 8 == 0 && z % 8 == 0 ? 1 : 0;
  return launch_1d(c.d, f, c.stream, vec ? count / 4 : count,
                   {&y, &bias, &z, &count, &ch, &r, &vec, &bf16});
}

Result<void> gemm_half_out(const ExecCtx& c, int64_t m, int64_t n, int64_t k, CUdeviceptr a,
                           CUdeviceptr b, CUdeviceptr y, int half) {
  // Column-major, Yᵀ[n, m] = B[n, k] · Aᵀ: B read transposed (ldb k), A as
  // it is (lda k), as gemm_rm(ta = false, tb = true) does.
  const float alpha = 1.0f, beta = 0.0f;
  const int M = static_cast<int>(m), N = static_cast<int>(n), K = static_cast<int>(k);
  return c.d.check_blas(
      c.d.api().cublasGemmStridedBatchedEx(
          c.blas, kCublasOpT, kCublasOpN, N, M, K, &alpha, reinterpret_cast<const void*>(b), half,
          K, 0, reinterpret_cast<const void*>(a), half, K, 0, &beta, reinterpret_cast<void*>(y),
          half, N, 0, 1, kCublasCompute32F, kCublasGemmDefault),
      "cublasGemmStridedBatchedEx");
}

size_t StoragePlan::new_slot(const dims_t& dims, DType dtype, Storage storage) {
  Program::Slot s;
  s.offset = p_.arena_bytes;
  s.dims = dims;
  s.dtype = dtype;
  s.storage = storage;
  p_.slots.push_back(std::move(s));
  p_.arena_bytes += round256(static_cast<size_t>(numel_of(dims)) * dtype_size(dtype));
  return p_.slots.size() - 1;
}

size_t StoragePlan::output_slot(const OpPlan& op, size_t o) {
  const bool half = o < op.writes.size() && op.writes[o] == Storage::kHalf;
  const DType dt = half ? half_dtype(half_) : o < op.dtypes.size() ? op.dtypes[o] : DType::kF32;
  return new_slot(op.outputs[o], dt, half ? Storage::kHalf : Storage::kF32);
}

Result<size_t> StoragePlan::as(size_t slot, Storage want, const std::string& why) {
  const Program::Slot& from = p_.slots[slot];
  if (from.storage == want) return slot;
  if (from.dtype != DType::kF32 && from.storage == Storage::kF32)
    return fail(ErrorCode::kUnsupported, "a " + std::string(dtype_name(from.dtype)) +
                                             " value cannot be read in half precision");
  if (from.dims_only || (from.host && !from.constant))
    return fail(ErrorCode::kInternal, "a conversion of a value with no device bytes");
  if (auto it = converted_.find({slot, want}); it != converted_.end()) return it->second;
  const dims_t dims = from.dims;
  const Storage have = from.storage;
  const size_t to = new_slot(dims, want == Storage::kHalf ? half_dtype(half_) : DType::kF32, want);
  Program::Step st;
  st.in = {slot};
  st.out = {to};
  st.op.outputs = {dims};
  st.op.kernel = convert_kernel(have, want, half_, dims);
  const int half = half_;
  st.op.run = [=](const ExecCtx& c, const Bind& b) {
    return convert_storage(c, b.in[0], have, b.out[0], want, dims, half);
  };
  const auto name = name_of_.find(slot);
  st.label = "convert '" + (name == name_of_.end() ? std::string("?") : name->second) + "' " +
             storage_name(have, half_, dims) + " -> " + storage_name(want, half_, dims) + " (" +
             why + ")";
  lines_.push_back(st.label + " [" + st.op.kernel + "]");
  if (name != name_of_.end()) name_of_[to] = name->second;
  p_.launches += 1;
  p_.steps.push_back(std::move(st));
  converted_[{slot, want}] = to;
  return to;
}

Result<void> StoragePlan::plan_step(Program::Step& st, const Unit& u, const SlotFor& slot_for,
                                    const PlanEnv& env) {
  std::vector<dims_t> dims;
  std::vector<Storage> have;
  std::vector<size_t> in;
  for (ValueId v : u.inputs) {
    HONE_TRY(size_t s, slot_for(v));
    name_of_.emplace(s, g_.value(v).name);
    in.push_back(s);
    dims.push_back(p_.slots[s].dims);
    have.push_back(p_.slots[s].storage);
  }
  const std::string hname = half_ == kCudaR16BF ? "bf16" : "f16";
  auto half = u.op->plan_half(dims, have, env);
  if (half) {
    for (size_t i = 0; i < in.size(); ++i) {
      const Storage want = i < half->reads.size() ? half->reads[i] : Storage::kF32;
      HONE_TRY(in[i], as(in[i], want, "read by " + u.label));
    }
    st.in = std::move(in);
    st.op = std::move(*half);
    return {};
  }
  if (half.error().code() != ErrorCode::kUnsupported)
    HONE_LOG_DEBUG("cuda: {} runs in f32: {}", u.label, half.error().to_string());
  auto op = u.op->plan(dims, env);
  if (!op) return fail(std::move(op).error().add_context("while planning " + u.label));
  for (size_t i = 0; i < in.size(); ++i) {
    if (have[i] != Storage::kHalf) continue;
    // Only what the step reads needs its bytes in f32: a dims-only or host
    // step reads none, and a view of a half value stays half where its
    // channels-last order is its row-major one on both sides.
    if (op->dims_only) continue;
    bool view = false, viewable = channels_last_is_row_major(dims[i]);
    for (size_t o = 0; o < op->alias.size(); ++o)
      if (op->alias[o] == static_cast<int>(i)) {
        view = true;
        viewable = viewable && channels_last_is_row_major(op->outputs[o]);
      }
    if (view && viewable) continue;
    if (!op->run && !view) continue;
    HONE_TRY(in[i], as(in[i], Storage::kF32,
                       "read by " + u.label + ": " +
                           (view                       ? "a view of another order"
                            : !op->f32_because.empty() ? op->f32_because
                                                       : "no " + hname + " kernel")));
  }
  st.in = std::move(in);
  st.op = std::move(*op);
  return {};
}

}  // namespace hone::cuda
