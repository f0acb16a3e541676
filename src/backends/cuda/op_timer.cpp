#include "backends/cuda/op_timer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <random>

#include "backends/cuda/kernels.h"
#include "core/log.h"
#include "hone/half.h"

namespace hone::cuda {

namespace {

std::mutex mu;  // serialises the planning stream and its scratch memory
std::map<int, std::unique_ptr<Stream>> streams;  // per math mode, kept for the process

Result<Stream*> planning_stream(const Driver& d, int math_mode, const Cudnn* dnn) {
  auto& st = streams[math_mode];
  if (!st) {
    HONE_TRY(Stream s, Stream::create(d, math_mode, dnn));
    st = std::make_unique<Stream>(std::move(s));
  }
  return st.get();
}

size_t f32_bytes(const dims_t& dims) {
  return (static_cast<size_t>(numel_of(dims)) * sizeof(float) + 255) / 256 * 256;
}

/// `p` bound to the process-wide scratch buffer (inputs, outputs and
/// workspace, filled with 0.01f) on the planning stream of `math_mode`.
struct OnScratch {
  const Driver* d;
  Stream* st;
  const Module* fixed;
  Bind b;
};

// Called with mu held: the scratch buffer and the stream are shared.
Result<OnScratch> on_scratch(const OpPlan& p, const std::vector<dims_t>& in, int math_mode,
                             const Cudnn* dnn) {
  static DeviceBuffer scratch;  // grown as needed
  HONE_TRY(const Driver* d, Driver::get());
  HONE_CHECK_OK(d->make_current());
  const Api& a = d->api();
  HONE_TRY(Stream * st, planning_stream(*d, math_mode, dnn));
  size_t total = (p.workspace_bytes + 255) / 256 * 256;
  for (const dims_t& x : in) total += f32_bytes(x);
  for (const dims_t& x : p.outputs) total += f32_bytes(x);
  if (scratch.bytes() < total) {
    scratch = DeviceBuffer();
    HONE_TRY(scratch, DeviceBuffer::allocate(*d, total));
  }
  constexpr unsigned kPointZeroOne = 0x3C23D70Au;  // 0.01f
  HONE_CHECK_OK(d->check(a.cuMemsetD32Async(scratch.ptr(), kPointZeroOne, total / 4, st->get()),
                         "cuMemsetD32Async"));
  Bind b;
  CUdeviceptr at = scratch.ptr();
  for (const dims_t& x : in) {
    b.in.push_back(at);
    at += f32_bytes(x);
  }
  for (const dims_t& x : p.outputs) {
    b.out.push_back(at);
    at += f32_bytes(x);
  }
  b.workspace = at;
  HONE_TRY(const Module* fixed, fixed_module(*d));
  return OnScratch{d, st, fixed, std::move(b)};
}

}  // namespace

Result<void> run_op_once(const OpPlan& p, const std::vector<dims_t>& in, int math_mode,
                         const Cudnn* dnn) {
  std::lock_guard lock(mu);
  HONE_TRY(OnScratch r, on_scratch(p, in, math_mode, dnn));
  const CUstream s = r.st->get();
  const ExecCtx ctx{*r.d, *r.fixed, s, r.st->blas(), r.st->dnn()};
  HONE_CHECK_OK(p.run(ctx, r.b));
  return r.d->check(r.d->api().cuStreamSynchronize(s), "cuStreamSynchronize");
}

Result<double> time_op(const OpPlan& p, const std::vector<dims_t>& in, int math_mode,
                       const Cudnn* dnn) {
  std::lock_guard lock(mu);
  HONE_TRY(OnScratch r, on_scratch(p, in, math_mode, dnn));
  const Driver* d = r.d;
  const Api& a = d->api();
  const CUstream s = r.st->get();
  const Bind& b = r.b;
  const ExecCtx ctx{*d, *r.fixed, s, r.st->blas(), r.st->dnn()};
  CUevent e0 = nullptr, e1 = nullptr;
  HONE_CHECK_OK(d->check(a.cuEventCreate(&e0, 0), "cuEventCreate"));
  struct Events {
    const Api& a;
    CUevent& e0;
    CUevent& e1;
    ~Events() {
      if (e0) a.cuEventDestroy(e0);
      if (e1) a.cuEventDestroy(e1);
    }
  } guard{a, e0, e1};
  HONE_CHECK_OK(d->check(a.cuEventCreate(&e1, 0), "cuEventCreate"));
  HONE_CHECK_OK(p.run(ctx, b));  // warm-up: lazy set-up stays out of the time
  constexpr int kRuns = 5;
  auto elapsed = [&](const std::function<Result<void>()>& enqueue) -> Result<double> {
    HONE_CHECK_OK(d->check(a.cuEventRecord(e0, s), "cuEventRecord"));
    HONE_CHECK_OK(enqueue());
    HONE_CHECK_OK(d->check(a.cuEventRecord(e1, s), "cuEventRecord"));
    HONE_CHECK_OK(d->check(a.cuEventSynchronize(e1), "cuEventSynchronize"));
    float ms = 0;
    HONE_CHECK_OK(d->check(a.cuEventElapsedTime(&ms, e0, e1), "cuEventElapsedTime"));
    return static_cast<double>(ms) / kRuns;
  };
  auto runs = [&]() -> Result<void> {
    for (int i = 0; i < kRuns; ++i) HONE_CHECK_OK(p.run(ctx, b));
    return {};
  };
  // Timed as plans run: the runs captured in one CUDA graph, replayed (the
  // fastest of three replays after a warm one). Timing the enqueues instead
  // would charge each launch's host cost, which a replayed plan does not pay,
  // and favour candidates of fewer kernels on small shapes. A candidate that
  // cannot be captured is timed as enqueued.
  if (GraphExec::begin(*d, s)) {
    auto captured = runs();
    auto graph = GraphExec::end(*d, s);
    if (captured && graph) {
      HONE_CHECK_OK(graph->launch(s));
      double best = std::numeric_limits<double>::infinity();
      for (int r = 0; r < 3; ++r) {
        HONE_TRY(double ms, elapsed([&] { return graph->launch(s); }));
        best = std::min(best, ms);
      }
      return best;
    }
    HONE_LOG_DEBUG("cuda: {} is timed without a CUDA graph: {}", p.kernel,
                   (captured ? graph.error() : captured.error()).message());
  }
  return elapsed(runs);
}

namespace {

/// Uniform in [-1, 1) from a counter (splitmix64): the same values every
/// run, a few nanoseconds an element, where mt19937 and a distribution took
/// most of a second on an activation of vit_b_16 at batch 32.
float uniform_at(uint64_t seed, uint64_t i) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ull * (i + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<float>(static_cast<double>(z >> 40) * 0x1p-23 - 1.0);
}

Result<void> run_for_compare(const Driver& d, const ExecCtx& ctx, const OpPlan& p, Bind b,
                             CUdeviceptr out, size_t n, int out_half, std::vector<float>& host) {
  const Api& a = d.api();
  // Poison: an element left unwritten shows (a NaN in f32, or two in bf16/f16).
  const unsigned nan = out_half == 0            ? 0x7FC00000u
                       : out_half == kCudaR16BF ? 0x7FC07FC0u
                                                : 0x7E007E00u;
  const size_t bytes = n * (out_half == 0 ? sizeof(float) : sizeof(uint16_t));
  HONE_CHECK_OK(
      d.check(a.cuMemsetD32Async(out, nan, (bytes + 3) / 4, ctx.stream), "cuMemsetD32Async"));
  b.out = {out};
  if (p.run) HONE_CHECK_OK(p.run(ctx, b));
  host.resize(n);
  std::vector<uint16_t> bits(out_half == 0 ? 0 : n);
  void* dst = out_half == 0 ? static_cast<void*>(host.data()) : static_cast<void*>(bits.data());
  HONE_CHECK_OK(d.check(a.cuMemcpyDtoHAsync(dst, out, bytes, ctx.stream), "cuMemcpyDtoHAsync"));
  HONE_CHECK_OK(d.check(a.cuStreamSynchronize(ctx.stream), "cuStreamSynchronize"));
  for (size_t i = 0; i < bits.size(); ++i)
    host[i] = out_half == kCudaR16BF ? BFloat16::from_bits(bits[i]).to_float()
                                     : Half::from_bits(bits[i]).to_float();
  return {};
}

/// Whether two OpPlan::reads (or writes) name the same storage for every
/// value (a missing entry is kF32).
bool same_storage(const std::vector<Storage>& a, const std::vector<Storage>& b) {
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i)
    if ((i < a.size() ? a[i] : Storage::kF32) != (i < b.size() ? b[i] : Storage::kF32))
      return false;
  return true;
}

}  // namespace

std::vector<Result<double>> compare_ops(const std::vector<OpPlan>& cands, size_t reference,
                                        const std::vector<dims_t>& in,
                                        const std::vector<const Tensor*>& fixed, int math_mode,
                                        const Cudnn* dnn, int half) {
  std::vector<Result<double>> out(cands.size(), 0.0);
  auto fail_all = [&](const Error& e) {
    for (size_t i = 0; i < cands.size(); ++i)
      if (i != reference) out[i] = fail(e);
    return out;
  };
  const OpPlan& ref = cands[reference];
  for (size_t i = 0; i < cands.size(); ++i)
    if (i != reference &&
        (cands[i].outputs.empty() || ref.outputs.empty() || cands[i].outputs[0] != ref.outputs[0]))
      out[i] = fail(ErrorCode::kInternal, "compare_ops: the candidates' outputs differ in shape");
  std::lock_guard lock(mu);
  auto prepared = [&]() -> Result<void> {
    HONE_TRY(const Driver* d, Driver::get());
    HONE_CHECK_OK(d->make_current());
    const Api& a = d->api();
    HONE_TRY(Stream * st, planning_stream(*d, math_mode, dnn));
    const CUstream s = st->get();
    std::vector<DeviceBuffer> bufs;
    Bind b;
    std::vector<float> host;
    for (size_t i = 0; i < in.size(); ++i) {
      const auto n = static_cast<size_t>(numel_of(in[i]));
      const Tensor* t = i < fixed.size() ? fixed[i] : nullptr;
      const float* src = nullptr;
      if (t != nullptr && t->dtype() == DType::kF32 && static_cast<size_t>(t->numel()) == n) {
        src = t->data<float>();
      } else {
        host.resize(n);
        for (size_t k = 0; k < n; ++k) host[k] = uniform_at(1234 + i, k);
        src = host.data();
      }
      const bool half_in = half != 0 && i < ref.reads.size() && ref.reads[i] == Storage::kHalf;
      DeviceBuffer buf;
      if (half_in) {
        HONE_TRY(buf, upload_half(*d, src, n, half));
      } else {
        HONE_TRY(buf, DeviceBuffer::allocate(*d, f32_bytes(in[i])));
        if (n > 0)
          HONE_CHECK_OK(
              d->check(a.cuMemcpyHtoD(buf.ptr(), src, n * sizeof(float)), "cuMemcpyHtoD"));
      }
      b.in.push_back(buf.ptr());
      bufs.push_back(std::move(buf));
    }
    size_t ws_bytes = 256;
    for (const OpPlan& c : cands) ws_bytes = std::max(ws_bytes, c.workspace_bytes);
    HONE_TRY(DeviceBuffer ws, DeviceBuffer::allocate(*d, ws_bytes));
    b.workspace = ws.ptr();
    HONE_TRY(const Module* fixed_kernels, fixed_module(*d));
    const ExecCtx ctx{*d, *fixed_kernels, s, st->blas(), st->dnn()};
    const auto n = static_cast<size_t>(numel_of(ref.outputs.at(0)));
    HONE_TRY(DeviceBuffer dev_out, DeviceBuffer::allocate(*d, f32_bytes(ref.outputs[0])));
    const int out_half =
        half != 0 && !ref.writes.empty() && ref.writes[0] == Storage::kHalf ? half : 0;
    std::vector<float> want, got;
    HONE_CHECK_OK(run_for_compare(*d, ctx, ref, b, dev_out.ptr(), n, out_half, want));
    for (size_t c = 0; c < cands.size(); ++c) {
      if (c == reference || !out[c]) continue;
      if (!same_storage(cands[c].reads, ref.reads) || !same_storage(cands[c].writes, ref.writes)) {
        out[c] =
            fail(ErrorCode::kInternal, "compare_ops: the candidates read or write other storage");
        continue;
      }
      if (auto r = run_for_compare(*d, ctx, cands[c], b, dev_out.ptr(), n, out_half, got); !r) {
        out[c] = fail(std::move(r).error());
        continue;
      }
      double diff = 0, norm = 0;
      bool stray = false;
      for (size_t i = 0; i < n && !stray; ++i) {
        const double x = got[i], r = want[i];
        if (!std::isfinite(x) && std::isfinite(r)) stray = true;
        if (std::isfinite(r)) {
          diff += (x - r) * (x - r);
          norm += r * r;
        }
      }
      out[c] = stray ? std::numeric_limits<double>::infinity()
                     : std::sqrt(diff) / std::max(std::sqrt(norm), 1e-30);
    }
    return {};
  }();
  if (!prepared) return fail_all(prepared.error());
  return out;
}

Result<OpPlan> fastest(const std::string& label, const std::vector<dims_t>& in,
                       std::vector<OpPlan> cands, const BuildSettings& s, const Check& check,
                       const std::string& problem) {
  if (cands.empty()) return fail(ErrorCode::kInternal, label + ": no candidate kernel");
  std::vector<std::string> names;
  for (const OpPlan& c : cands) names.push_back(c.kernel);
  // This backend's record first (a loaded package's choices): no timing, no
  // check, and nothing shared with other backends of the process.
  if (s.choices)
    if (auto i = s.choices->replay(KernelChoices::key(label, in, s.math.mode), names, label))
      return std::move(cands[*i]);
  if (cands.size() == 1) return std::move(cands.front());
  const int math_mode = s.math.tf32 ? kCublasTf32Math : kCublasDefaultMath;
  const Cudnn* dnn = s.conv.dnn;
  auto keep = [&](size_t i, KernelChoices::How how) {
    if (s.choices) s.choices->record(label, in, s.math.mode, cands[i].kernel, how);
    return std::move(cands[i]);
  };
  static std::map<std::vector<std::string>, size_t> chosen;
  std::vector<std::string> key{std::to_string(math_mode), problem};
  key.insert(key.end(), names.begin(), names.end());
  for (const dims_t& d : in) key.push_back(shape_to_string(d));
  static std::mutex chosen_mu;
  {
    std::unique_lock lock(chosen_mu);
    if (auto it = chosen.find(key); it != chosen.end()) {
      const size_t i = it->second;
      lock.unlock();
      HONE_LOG_DEBUG("cuda: {}: {} (timed earlier in this process)", label, cands[i].kernel);
      return keep(i, KernelChoices::How::kReused);
    }
  }
  // A candidate whose output strays from the reference's on random data is
  // never kept, however fast (a kernel wrong for this shape must not win).
  std::vector<bool> ok(cands.size(), true);
  if (check.reference >= 0 && static_cast<size_t>(check.reference) < cands.size()) {
    const auto r = static_cast<size_t>(check.reference);
    const OpPlan& ref = cands[r];
    std::vector<Result<double>> errs =
        compare_ops(cands, r, in, check.fixed, math_mode, dnn, s.math.half);
    for (size_t i = 0; i < cands.size(); ++i) {
      if (i == r) continue;
      const Result<double>& err = errs[i];
      if (!err) {  // e.g. a library status the candidate's shape provokes
        ok[i] = false;
        HONE_LOG_WARN("cuda: {}: {} failed on random inputs ({}); not used", label, cands[i].kernel,
                      err.error().message());
        continue;
      }
      if (!(*err <= check.tolerance)) {
        ok[i] = false;
        HONE_LOG_WARN(
            "cuda: {}: {} differs from {} by {:.3g} (relative L2; allowed {:.3g}) "
            "on random inputs; not used",
            label, cands[i].kernel, ref.kernel, *err, check.tolerance);
      }
    }
  }
  size_t best = cands.size();
  double best_ms = 0;
  std::string line;
  for (size_t i = 0; i < cands.size(); ++i) {
    if (!ok[i]) continue;
    HONE_TRY(double ms, time_op(cands[i], in, math_mode, dnn));
    line += (line.empty() ? "" : ", ") + cands[i].kernel + " " + std::to_string(ms) + " ms";
    if (best == cands.size() || ms < best_ms) {
      best_ms = ms;
      best = i;
    }
  }
  if (best == cands.size()) return fail(ErrorCode::kInternal, label + ": no candidate passed");
  HONE_LOG_DEBUG("cuda: {} {}: {}; chose {}", label, shapes_text(in), line, cands[best].kernel);
  {
    std::lock_guard lock(chosen_mu);
    chosen.emplace(key, best);
  }
  return keep(best, KernelChoices::How::kTimed);
}

double check_tolerance(int gemm_half, bool tf32) {
  return gemm_half != 0 ? 3e-2 : tf32 ? 5e-3 : 1e-4;
}

}  // namespace hone::cuda
