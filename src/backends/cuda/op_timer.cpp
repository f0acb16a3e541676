#include "backends/cuda/op_timer.h"

#include <map>
#include <memory>
#include <mutex>

#include "backends/cuda/kernels.h"
#include "core/log.h"

namespace hone::cuda {

Result<double> time_op(const OpPlan& p, const std::vector<dims_t>& in, int math_mode,
                       const Cudnn* dnn) {
  static std::mutex mu;
  static std::map<int, std::unique_ptr<Stream>> streams;  // per math mode, kept for the process
  static DeviceBuffer scratch;                            // grown as needed
  std::lock_guard lock(mu);
  HONE_TRY(const Driver* d, Driver::get());
  HONE_CHECK_OK(d->make_current());
  const Api& a = d->api();
  auto& st = streams[math_mode];
  if (!st) {
    HONE_TRY(Stream s, Stream::create(*d, math_mode, dnn));
    st = std::make_unique<Stream>(std::move(s));
  }
  auto bytes = [](const dims_t& dims) {
    return (static_cast<size_t>(numel_of(dims)) * sizeof(float) + 255) / 256 * 256;
  };
  size_t total = (p.workspace_bytes + 255) / 256 * 256;
  for (const dims_t& x : in) total += bytes(x);
  for (const dims_t& x : p.outputs) total += bytes(x);
  if (scratch.bytes() < total) {
    scratch = DeviceBuffer();
    HONE_TRY(scratch, DeviceBuffer::allocate(*d, total));
  }
  const CUstream s = st->get();
  constexpr unsigned kPointZeroOne = 0x3C23D70Au;  // 0.01f
  HONE_CHECK_OK(
      d->check(a.cuMemsetD32Async(scratch.ptr(), kPointZeroOne, total / 4, s), "cuMemsetD32Async"));
  Bind b;
  CUdeviceptr at = scratch.ptr();
  for (const dims_t& x : in) {
    b.in.push_back(at);
    at += bytes(x);
  }
  for (const dims_t& x : p.outputs) {
    b.out.push_back(at);
    at += bytes(x);
  }
  b.workspace = at;
  HONE_TRY(const Module* fixed, fixed_module(*d));
  const ExecCtx ctx{*d, *fixed, s, st->blas(), st->dnn()};
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
  HONE_CHECK_OK(d->check(a.cuEventRecord(e0, s), "cuEventRecord"));
  for (int i = 0; i < kRuns; ++i) HONE_CHECK_OK(p.run(ctx, b));
  HONE_CHECK_OK(d->check(a.cuEventRecord(e1, s), "cuEventRecord"));
  HONE_CHECK_OK(d->check(a.cuEventSynchronize(e1), "cuEventSynchronize"));
  float ms = 0;
  HONE_CHECK_OK(d->check(a.cuEventElapsedTime(&ms, e0, e1), "cuEventElapsedTime"));
  return static_cast<double>(ms) / kRuns;
}

Result<OpPlan> fastest(const std::string& label, const std::vector<dims_t>& in,
                       std::vector<OpPlan> cands, int math_mode, const Cudnn* dnn) {
  if (cands.empty()) return fail(ErrorCode::kInternal, label + ": no candidate kernel");
  if (cands.size() == 1) return std::move(cands.front());
  static std::mutex mu;
  static std::map<std::vector<std::string>, size_t> chosen;
  std::vector<std::string> key{std::to_string(math_mode)};
  for (const OpPlan& c : cands) key.push_back(c.kernel);
  for (const dims_t& d : in) key.push_back(shape_to_string(d));
  {
    std::lock_guard lock(mu);
    if (auto it = chosen.find(key); it != chosen.end()) return std::move(cands[it->second]);
  }
  size_t best = 0;
  double best_ms = 0;
  std::string line;
  for (size_t i = 0; i < cands.size(); ++i) {
    HONE_TRY(double ms, time_op(cands[i], in, math_mode, dnn));
    line += (line.empty() ? "" : ", ") + cands[i].kernel + " " + std::to_string(ms) + " ms";
    if (i == 0 || ms < best_ms) {
      best_ms = ms;
      best = i;
    }
  }
  HONE_LOG_DEBUG("cuda: {}: {}; chose {}", label, line, cands[best].kernel);
  {
    std::lock_guard lock(mu);
    chosen.emplace(key, best);
  }
  return std::move(cands[best]);
}

}  // namespace hone::cuda
