#include "backends/cuda/cuda_api.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>

#include "backends/cuda/cudnn_api.h"
#include "core/block_cache.h"
#include "core/log.h"
#include "hone/half.h"
#include "hone/thread_pool.h"

namespace hone::cuda {
namespace {

constexpr int kAttrMultiprocessors = 16;  // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
constexpr int kAttrCcMajor = 75;          // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
constexpr int kAttrCcMinor = 76;          // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR

/// The first of `names` that dlopen finds, or why none was.
Result<void*> open_first(const std::vector<std::string>& names, const std::string& prefix) {
  std::string tried, last_error;
  for (const std::string& n : names) {
    if (void* h = dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      HONE_LOG_DEBUG("cuda: loaded {}", n);
      return h;
    }
    const char* e = dlerror();
    last_error = e != nullptr ? e : "unknown dlopen error";
    tried += (tried.empty() ? "" : ", ") + n;
  }
  return fail(ErrorCode::kUnsupportedHardware,
              prefix +
                  (names.size() == 1 ? names[0] + " not found" : "none of " + tried + " found") +
                  " (" + last_error + ")");
}

/// Resolves `fn` from `lib` under the first name in `symbols` that exists.
template <class Fn>
Result<void> bind(void* lib, Fn& fn, std::initializer_list<const char*> symbols,
                  const std::string& libname) {
  for (const char* s : symbols)
    if (void* p = dlsym(lib, s)) {
      fn = reinterpret_cast<Fn>(p);
      return {};
    }
  return fail(ErrorCode::kUnsupportedHardware,
              libname + " lacks " + std::string(*symbols.begin()) + "; is it too old?");
}

Result<void> bind_driver(void* h, Api& a) {
  const std::string lib = "libcuda.so.1";
  HONE_CHECK_OK(bind(h, a.cuInit, {"cuInit"}, lib));
  HONE_CHECK_OK(bind(h, a.cuDeviceGetCount, {"cuDeviceGetCount"}, lib));
  HONE_CHECK_OK(bind(h, a.cuDeviceGet, {"cuDeviceGet"}, lib));
  HONE_CHECK_OK(bind(h, a.cuDeviceGetName, {"cuDeviceGetName"}, lib));
  HONE_CHECK_OK(bind(h, a.cuDeviceGetAttribute, {"cuDeviceGetAttribute"}, lib));
  HONE_CHECK_OK(bind(h, a.cuDevicePrimaryCtxRetain, {"cuDevicePrimaryCtxRetain"}, lib));
  HONE_CHECK_OK(bind(h, a.cuCtxSetCurrent, {"cuCtxSetCurrent"}, lib));
  HONE_CHECK_OK(bind(h, a.cuMemAlloc, {"cuMemAlloc_v2"}, lib));
  HONE_CHECK_OK(bind(h, a.cuMemFree, {"cuMemFree_v2"}, lib));
  HONE_CHECK_OK(bind(h, a.cuMemGetInfo, {"cuMemGetInfo_v2"}, lib));
  HONE_CHECK_OK(bind(h, a.cuMemcpyHtoDAsync, {"cuMemcpyHtoDAsync_v2"}, lib));
  HONE_CHECK_OK(bind(h, a.cuMemcpyDtoHAsync, {"cuMemcpyDtoHAsync_v2"}, lib));
  HONE_CHECK_OK(bind(h, a.cuMemcpyDtoDAsync, {"cuMemcpyDtoDAsync_v2"}, lib));
  HONE_CHECK_OK(bind(h, a.cuMemcpyHtoD, {"cuMemcpyHtoD_v2"}, lib));
  HONE_CHECK_OK(bind(h, a.cuStreamCreate, {"cuStreamCreate"}, lib));
  HONE_CHECK_OK(bind(h, a.cuStreamDestroy, {"cuStreamDestroy_v2", "cuStreamDestroy"}, lib));
  HONE_CHECK_OK(bind(h, a.cuStreamSynchronize, {"cuStreamSynchronize"}, lib));
  HONE_CHECK_OK(bind(h, a.cuModuleLoadData, {"cuModuleLoadData"}, lib));
  HONE_CHECK_OK(bind(h, a.cuModuleUnload, {"cuModuleUnload"}, lib));
  HONE_CHECK_OK(bind(h, a.cuModuleGetFunction, {"cuModuleGetFunction"}, lib));
  HONE_CHECK_OK(bind(h, a.cuLaunchKernel, {"cuLaunchKernel"}, lib));
  HONE_CHECK_OK(bind(h, a.cuStreamBeginCapture, {"cuStreamBeginCapture_v2"}, lib));
  HONE_CHECK_OK(bind(h, a.cuStreamEndCapture, {"cuStreamEndCapture"}, lib));
  HONE_CHECK_OK(bind(h, a.cuGraphInstantiateWithFlags, {"cuGraphInstantiateWithFlags"}, lib));
  HONE_CHECK_OK(bind(h, a.cuGraphLaunch, {"cuGraphLaunch"}, lib));
  HONE_CHECK_OK(bind(h, a.cuGraphExecDestroy, {"cuGraphExecDestroy"}, lib));
  HONE_CHECK_OK(bind(h, a.cuGraphDestroy, {"cuGraphDestroy"}, lib));
  HONE_CHECK_OK(bind(h, a.cuMemsetD32Async, {"cuMemsetD32Async"}, lib));
  HONE_CHECK_OK(bind(h, a.cuMemHostAlloc, {"cuMemHostAlloc"}, lib));
  HONE_CHECK_OK(bind(h, a.cuMemFreeHost, {"cuMemFreeHost"}, lib));
  HONE_CHECK_OK(bind(h, a.cuPointerGetAttribute, {"cuPointerGetAttribute"}, lib));
  HONE_CHECK_OK(bind(h, a.cuEventCreate, {"cuEventCreate"}, lib));
  HONE_CHECK_OK(bind(h, a.cuEventRecord, {"cuEventRecord"}, lib));
  HONE_CHECK_OK(bind(h, a.cuEventSynchronize, {"cuEventSynchronize"}, lib));
  HONE_CHECK_OK(
      bind(h, a.cuEventElapsedTime, {"cuEventElapsedTime_v2", "cuEventElapsedTime"}, lib));
  HONE_CHECK_OK(bind(h, a.cuEventDestroy, {"cuEventDestroy_v2", "cuEventDestroy"}, lib));
  HONE_CHECK_OK(bind(h, a.cuStreamWaitEvent, {"cuStreamWaitEvent"}, lib));
  HONE_CHECK_OK(bind(h, a.cuGetErrorName, {"cuGetErrorName"}, lib));
  HONE_CHECK_OK(bind(h, a.cuGetErrorString, {"cuGetErrorString"}, lib));
  return {};
}

Result<void> bind_cublas(void* h, Api& a) {
  const std::string lib = "libcublas";
  HONE_CHECK_OK(bind(h, a.cublasCreate, {"cublasCreate_v2"}, lib));
  HONE_CHECK_OK(bind(h, a.cublasDestroy, {"cublasDestroy_v2"}, lib));
  HONE_CHECK_OK(bind(h, a.cublasSetStream, {"cublasSetStream_v2"}, lib));
  HONE_CHECK_OK(bind(h, a.cublasSetMathMode, {"cublasSetMathMode"}, lib));
  HONE_CHECK_OK(bind(h, a.cublasSgemm, {"cublasSgemm_v2"}, lib));
  HONE_CHECK_OK(bind(h, a.cublasSgemmStridedBatched, {"cublasSgemmStridedBatched"}, lib));
  HONE_CHECK_OK(bind(h, a.cublasGemmStridedBatchedEx, {"cublasGemmStridedBatchedEx"}, lib));
  return {};
}

Result<void> bind_nvrtc(void* h, Api& a) {
  const std::string lib = "libnvrtc";
  HONE_CHECK_OK(bind(h, a.nvrtcCreateProgram, {"nvrtcCreateProgram"}, lib));
  HONE_CHECK_OK(bind(h, a.nvrtcCompileProgram, {"nvrtcCompileProgram"}, lib));
  HONE_CHECK_OK(bind(h, a.nvrtcGetPTXSize, {"nvrtcGetPTXSize"}, lib));
  HONE_CHECK_OK(bind(h, a.nvrtcGetPTX, {"nvrtcGetPTX"}, lib));
  HONE_CHECK_OK(bind(h, a.nvrtcGetProgramLogSize, {"nvrtcGetProgramLogSize"}, lib));
  HONE_CHECK_OK(bind(h, a.nvrtcGetProgramLog, {"nvrtcGetProgramLog"}, lib));
  HONE_CHECK_OK(bind(h, a.nvrtcDestroyProgram, {"nvrtcDestroyProgram"}, lib));
  HONE_CHECK_OK(bind(h, a.nvrtcGetErrorString, {"nvrtcGetErrorString"}, lib));
  return {};
}

std::string error_name(const Api& a, CUresult r) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (a.cuGetErrorName) a.cuGetErrorName(r, &name);
  if (a.cuGetErrorString) a.cuGetErrorString(r, &text);
  std::string s = name != nullptr ? name : "CUDA error " + std::to_string(r);
  if (text != nullptr) s += std::string(" (") + text + ")";
  return s;
}

}  // namespace

Result<const Driver*> Driver::probe(const LibraryNames& names) {
  // Released (leaked on purpose) only on success: a driver lives as long as the process.
  std::unique_ptr<Driver> owner(new Driver());
  Driver* d = owner.get();
  Api& a = d->api_;
  HONE_TRY(void* drv, open_first(names.driver, "no CUDA device: "));
  if (auto r = bind_driver(drv, a); !r)
    return fail(ErrorCode::kUnsupportedHardware, "no CUDA device: " + r.error().message());
  if (CUresult r = a.cuInit(0); r != 0)
    return fail(ErrorCode::kUnsupportedHardware,
                "no CUDA device: cuInit failed: " + error_name(a, r));
  int count = 0;
  if (CUresult r = a.cuDeviceGetCount(&count); r != 0)
    return fail(ErrorCode::kUnsupportedHardware,
                "no CUDA device: cuDeviceGetCount failed: " + error_name(a, r));
  if (count == 0)
    return fail(ErrorCode::kUnsupportedHardware, "no CUDA device: the driver reports 0 devices");
  // HONE_CUDA_DEVICE picks the device: `mpirun hone tune` sets it to each
  // rank's local rank (src/dist/launch.h), so the ranks on a host share no GPU.
  int ordinal = 0;
  if (const char* env = std::getenv("HONE_CUDA_DEVICE"); env != nullptr && *env != '\0') {
    char* end = nullptr;
    const long v = std::strtol(env, &end, 10);
    if (*end != '\0' || v < 0 || v >= count)
      return fail(ErrorCode::kUnsupportedHardware,
                  "no CUDA device: HONE_CUDA_DEVICE=" + std::string(env) + " but the driver sees " +
                      std::to_string(count) + " device(s), 0 to " + std::to_string(count - 1));
    ordinal = static_cast<int>(v);
  }
  d->ordinal_ = ordinal;
  HONE_CHECK_OK(d->check(a.cuDeviceGet(&d->device_, ordinal), "cuDeviceGet"));
  char name[256] = {};
  HONE_CHECK_OK(d->check(a.cuDeviceGetName(name, sizeof(name) - 1, d->device_), "cuDeviceGetName"));
  HONE_CHECK_OK(d->check(a.cuDeviceGetAttribute(&d->cc_major_, kAttrCcMajor, d->device_),
                         "cuDeviceGetAttribute"));
  HONE_CHECK_OK(d->check(a.cuDeviceGetAttribute(&d->cc_minor_, kAttrCcMinor, d->device_),
                         "cuDeviceGetAttribute"));
  HONE_CHECK_OK(d->check(a.cuDeviceGetAttribute(&d->sms_, kAttrMultiprocessors, d->device_),
                         "cuDeviceGetAttribute"));
  d->description_ = std::string(name) + " (sm_" + std::to_string(d->cc_major_) +
                    std::to_string(d->cc_minor_) + ")";
  const std::string found = "CUDA device " + d->description_ + " found but ";
  auto blas = open_first(names.cublas, found);
  if (!blas) return fail(std::move(blas).error());
  HONE_CHECK_OK(bind_cublas(*blas, a));
  auto rtc = open_first(names.nvrtc, found);
  if (!rtc) return fail(std::move(rtc).error());
  HONE_CHECK_OK(bind_nvrtc(*rtc, a));
  HONE_CHECK_OK(
      d->check(a.cuDevicePrimaryCtxRetain(&d->ctx_, d->device_), "cuDevicePrimaryCtxRetain"));
  // cuBLASLt is optional: without it matrix products run on cuBLAS alone.
  if (auto lt = open_first(names.cublas_lt, "")) {
    const std::string lib = "libcublasLt";
    auto bound = [&]() -> Result<void> {
      HONE_CHECK_OK(bind(*lt, a.cublasLtCreate, {"cublasLtCreate"}, lib));
      HONE_CHECK_OK(bind(*lt, a.cublasLtMatmulDescCreate, {"cublasLtMatmulDescCreate"}, lib));
      HONE_CHECK_OK(bind(*lt, a.cublasLtMatmulDescDestroy, {"cublasLtMatmulDescDestroy"}, lib));
      HONE_CHECK_OK(
          bind(*lt, a.cublasLtMatmulDescSetAttribute, {"cublasLtMatmulDescSetAttribute"}, lib));
      HONE_CHECK_OK(bind(*lt, a.cublasLtMatrixLayoutCreate, {"cublasLtMatrixLayoutCreate"}, lib));
      HONE_CHECK_OK(bind(*lt, a.cublasLtMatrixLayoutDestroy, {"cublasLtMatrixLayoutDestroy"}, lib));
      HONE_CHECK_OK(
          bind(*lt, a.cublasLtMatmulPreferenceCreate, {"cublasLtMatmulPreferenceCreate"}, lib));
      HONE_CHECK_OK(
          bind(*lt, a.cublasLtMatmulPreferenceDestroy, {"cublasLtMatmulPreferenceDestroy"}, lib));
      HONE_CHECK_OK(bind(*lt, a.cublasLtMatmulPreferenceSetAttribute,
                         {"cublasLtMatmulPreferenceSetAttribute"}, lib));
      HONE_CHECK_OK(
          bind(*lt, a.cublasLtMatmulAlgoGetHeuristic, {"cublasLtMatmulAlgoGetHeuristic"}, lib));
      HONE_CHECK_OK(bind(*lt, a.cublasLtMatmul, {"cublasLtMatmul"}, lib));
      // Optional: only FP8 products (fp8.h) ask which release this is.
      if (bind(*lt, a.cublasLtGetVersion, {"cublasLtGetVersion"}, lib))
        d->lt_version_ = a.cublasLtGetVersion();
      return d->check_blas(a.cublasLtCreate(&d->lt_), "cublasLtCreate");
    }();
    if (!bound) {
      d->lt_ = nullptr;
      d->lt_why_not_ = bound.error().message();
    }
  } else {
    d->lt_why_not_ = lt.error().message();
  }
  HONE_LOG_DEBUG("cuda: using {}", d->description_);
  return owner.release();
}

Result<const Driver*> Driver::get() {
  static const Result<const Driver*> driver = probe(LibraryNames{});
  return driver;
}

Result<void> Driver::make_current() const {
  return check(api_.cuCtxSetCurrent(ctx_), "cuCtxSetCurrent");
}

Result<void> Driver::check(CUresult r, const char* what) const {
  if (r == 0) return {};
  constexpr CUresult kOutOfMemory = 2;  // CUDA_ERROR_OUT_OF_MEMORY
  return fail(r == kOutOfMemory ? ErrorCode::kOutOfMemory : ErrorCode::kInternal,
              std::string(what) + ": " + error_name(api_, r));
}

Result<std::pair<size_t, size_t>> Driver::memory_info() const {
  size_t free = 0, total = 0;
  HONE_CHECK_OK(check(api_.cuMemGetInfo(&free, &total), "cuMemGetInfo"));
  return std::pair<size_t, size_t>{free, total};
}

Result<void> Driver::allocate(CUdeviceptr* ptr, size_t bytes) const {
  const CUresult r = api_.cuMemAlloc(ptr, bytes);
  if (r == 0) return {};
  auto gib = [](size_t b) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(b) / (1 << 30));
    return std::string(text);
  };
  std::string where = description_;
  if (auto info = memory_info())
    where = gib(info->first) + " free of " + gib(info->second) + " on " + description_;
  Error e = check(r, "cuMemAlloc").error();
  e.add_context("while allocating " + std::to_string(bytes) + " bytes of device memory (" + where +
                ")");
  return fail(std::move(e));
}

Result<void> Driver::check_blas(int status, const char* what) const {
  if (status == 0) return {};
  constexpr int kAllocFailed = 3;  // CUBLAS_STATUS_ALLOC_FAILED
  return fail(status == kAllocFailed ? ErrorCode::kOutOfMemory : ErrorCode::kInternal,
              std::string(what) + " failed with cuBLAS status " + std::to_string(status));
}

Result<DeviceBuffer> DeviceBuffer::allocate(const Driver& d, size_t bytes) {
  DeviceBuffer b;
  b.d_ = &d;
  b.bytes_ = bytes;
  if (bytes == 0) return b;
  HONE_CHECK_OK(d.allocate(&b.ptr_, bytes));
  return b;
}

Result<DeviceBuffer> DeviceBuffer::upload(const Driver& d, const void* data, size_t bytes) {
  HONE_TRY(DeviceBuffer b, allocate(d, bytes));
  if (bytes > 0) HONE_CHECK_OK(d.check(d.api().cuMemcpyHtoD(b.ptr_, data, bytes), "cuMemcpyHtoD"));
  return b;
}

uint16_t half_bits(float v, int half) {
  return half == kCudaR16BF ? BFloat16::from_float(v).bits : Half::from_float(v).bits;
}

Result<DeviceBuffer> upload_half(const Driver& d, const float* f, size_t n, int half) {
  std::vector<uint16_t> h(n);
  for (size_t i = 0; i < n; ++i) h[i] = half_bits(f[i], half);
  return DeviceBuffer::upload(d, h.data(), n * sizeof(uint16_t));
}

DeviceBuffer::~DeviceBuffer() {
  // Errors here (a context torn down at process exit) leave nothing to free.
  if (ptr_ != 0) {
    (void)d_->make_current();  // a thread that never ran CUDA may drop the last owner
    (void)d_->api().cuMemFree(ptr_);
  }
}

Result<PinnedBuffer> PinnedBuffer::allocate(const Driver& d, size_t bytes) {
  PinnedBuffer b;
  b.d_ = &d;
  if (bytes == 0) return b;
  HONE_CHECK_OK_CTX(d.check(d.api().cuMemHostAlloc(&b.ptr_, bytes, 0), "cuMemHostAlloc"),
                    "while allocating " + std::to_string(bytes) + " bytes of pinned host memory");
  b.bytes_ = bytes;
  return b;
}

PinnedBuffer::~PinnedBuffer() {
  if (ptr_ != nullptr) {
    (void)d_->make_current();
    (void)d_->api().cuMemFreeHost(ptr_);
  }
}

namespace {

/// PinnedPool's free blocks; never destroyed (tensors may outlive static
/// destruction).
detail::BlockCache& pinned_free() {
  static auto* c = new detail::BlockCache(size_t{512} << 20);
  return *c;
}

void free_pinned(const Driver& d, const std::vector<detail::Block>& v) {
  if (v.empty()) return;
  (void)d.make_current();  // a thread that never ran CUDA may drop the last owner
  for (const detail::Block& b : v) (void)d.api().cuMemFreeHost(b.p);
}

}  // namespace

Result<Tensor> PinnedPool::tensor(const Driver& d, DType dtype, std::vector<int64_t> shape) {
  HONE_TRY(const size_t bytes, Tensor::bytes_for(dtype, shape));
  const size_t cap = detail::block_size_class(std::max<size_t>(bytes, 4096));
  void* p = pinned_free().take(cap);
  if (p == nullptr) {
    HONE_CHECK_OK(d.make_current());
    if (!d.check(d.api().cuMemHostAlloc(&p, cap, 0), "cuMemHostAlloc")) {
      trim();  // free blocks of other sizes may be what the limit is short of
      HONE_CHECK_OK_CTX(
          d.check(d.api().cuMemHostAlloc(&p, cap, 0), "cuMemHostAlloc"),
          "while allocating " + std::to_string(cap) + " bytes of page-locked host memory");
    }
  }
  const Driver* dp = &d;
  std::shared_ptr<void> storage(p, [dp, cap](void* q) {
    free_pinned(*dp, pinned_free().give({q, cap}));
  });
  return Tensor::adopt(dtype, std::move(shape), std::move(storage), cap, false);
}

size_t PinnedPool::trim() {
  const std::vector<detail::Block> all = pinned_free().drain();
  size_t bytes = 0;
  for (const detail::Block& b : all) bytes += b.cap;
  if (!all.empty()) {
    auto d = Driver::get();
    if (d) free_pinned(**d, all);
  }
  return bytes;
}

namespace {

constexpr size_t kCopyChunk = size_t{1} << 20;

/// The threads that move inputs into and outputs out of pinned memory: kept
/// for the process (starting threads for every copy cost more than a
/// megabyte's memcpy), up to 8, the caller included.
ThreadPool& copy_pool() {
  static ThreadPool pool(std::clamp(ThreadPool::hardware_threads(), 1, 8));
  return pool;
}

}  // namespace

Result<void> upload(const Driver& d, CUstream s, PinnedBuffer& staging, size_t staging_offset,
                    CUdeviceptr dst, const void* src, size_t bytes) {
  if (bytes < 2 * kCopyChunk || staging.bytes() < staging_offset + bytes)
    return d.check(d.api().cuMemcpyHtoDAsync(dst, src, bytes, s), "cuMemcpyHtoDAsync");
  const auto chunks = static_cast<int64_t>((bytes + kCopyChunk - 1) / kCopyChunk);
  std::vector<Result<void>> results(static_cast<size_t>(chunks));
  // Each chunk goes to the device as soon as it is in pinned memory, so the
  // copies of later chunks overlap the transfer of earlier ones.
  copy_pool().parallel_for(chunks, [&](int64_t b, int64_t e) {
    Result<void> current = d.make_current();
    for (int64_t c = b; c < e; ++c) {
      Result<void>& r = results[static_cast<size_t>(c)];
      if (!current) {
        r = current;
        continue;
      }
      const size_t off = static_cast<size_t>(c) * kCopyChunk,
                   len = std::min(kCopyChunk, bytes - off);
      char* stage = staging.data() + staging_offset + off;
      std::memcpy(stage, static_cast<const char*>(src) + off, len);
      r = d.check(d.api().cuMemcpyHtoDAsync(dst + off, stage, len, s), "cuMemcpyHtoDAsync");
    }
  });
  for (auto& r : results) HONE_CHECK_OK(r);
  return {};
}

bool is_pinned(const Driver& d, const void* p, size_t bytes) {
  if (p == nullptr || bytes == 0) return false;
  constexpr int kMemoryType = 2;  // CU_POINTER_ATTRIBUTE_MEMORY_TYPE
  constexpr unsigned kHost = 1;   // CU_MEMORYTYPE_HOST
  // Ordinary memory is refused (CUDA_ERROR_INVALID_VALUE) or reads as no type.
  auto host = [&](const char* at) {
    unsigned type = 0;
    return d.api().cuPointerGetAttribute(&type, kMemoryType, reinterpret_cast<CUdeviceptr>(at)) ==
               0 &&
           type == kHost;
  };
  const char* c = static_cast<const char*>(p);
  return host(c) && host(c + bytes - 1);
}

void parallel_copy(void* dst, const void* src, size_t bytes) {
  if (bytes < 2 * kCopyChunk) {
    std::memcpy(dst, src, bytes);
    return;
  }
  const auto chunks = static_cast<int64_t>((bytes + kCopyChunk - 1) / kCopyChunk);
  copy_pool().parallel_for(chunks, [&](int64_t b, int64_t e) {
    const size_t off = static_cast<size_t>(b) * kCopyChunk;
    const size_t end = std::min(bytes, static_cast<size_t>(e) * kCopyChunk);
    std::memcpy(static_cast<char*>(dst) + off, static_cast<const char*>(src) + off, end - off);
  });
}

Result<Module> Module::compile(const Driver& d, const std::string& source,
                               const std::string& name) {
  const Api& a = d.api();
  nvrtcProgram prog = nullptr;
  if (int r =
          a.nvrtcCreateProgram(&prog, source.c_str(), (name + ".cu").c_str(), 0, nullptr, nullptr);
      r != 0)
    return fail(ErrorCode::kInternal,
                "nvrtcCreateProgram: " + std::string(a.nvrtcGetErrorString(r)));
  struct Guard {
    const Api& a;
    nvrtcProgram* p;
    ~Guard() { a.nvrtcDestroyProgram(p); }
  } guard{a, &prog};
  // PTX for the device's own virtual architecture: the driver compiles it to
  // machine code at load, so one build serves whatever GPU is present.
  const std::string arch =
      "--gpu-architecture=compute_" + std::to_string(d.cc_major()) + std::to_string(d.cc_minor());
  const char* opts[] = {arch.c_str(), "--std=c++17"};
  const auto start = std::chrono::steady_clock::now();
  const int r = a.nvrtcCompileProgram(prog, 2, opts);
  if (r != 0) {
    size_t n = 0;
    a.nvrtcGetProgramLogSize(prog, &n);
    std::string log(n, '\0');
    if (n > 0) a.nvrtcGetProgramLog(prog, log.data());
    return fail(ErrorCode::kInternal,
                "NVRTC could not compile '" + name + "': " + a.nvrtcGetErrorString(r) + "\n" + log);
  }
  size_t n = 0;
  a.nvrtcGetPTXSize(prog, &n);
  std::string ptx(n, '\0');
  a.nvrtcGetPTX(prog, ptx.data());
  Module m;
  m.d_ = &d;
  HONE_CHECK_OK_CTX(d.check(a.cuModuleLoadData(&m.mod_, ptx.c_str()), "cuModuleLoadData"),
                    "while loading the kernels of '" + name + "'");
  HONE_LOG_DEBUG("cuda: compiled module '{}' ({} bytes of PTX) for {} in {} ms", name, n, arch,
                 std::chrono::duration_cast<std::chrono::milliseconds>(
                     std::chrono::steady_clock::now() - start)
                     .count());
  return m;
}

Module::~Module() {
  if (mod_ != nullptr) {
    (void)d_->make_current();
    (void)d_->api().cuModuleUnload(mod_);
  }
}

Result<CUfunction> Module::function(const std::string& name) const {
  CUfunction f = nullptr;
  HONE_CHECK_OK(d_->check(d_->api().cuModuleGetFunction(&f, mod_, name.c_str()),
                          ("cuModuleGetFunction '" + name + "'").c_str()));
  return f;
}

Result<Stream> Stream::create(const Driver& d, int math_mode, const Cudnn* dnn) {
  Stream s;
  s.d_ = &d;
  constexpr unsigned kNonBlocking = 1;  // CU_STREAM_NON_BLOCKING: no sync with stream 0
  auto handles = [&]() -> Result<void> {
    HONE_CHECK_OK(d.check(d.api().cuStreamCreate(&s.stream_, kNonBlocking), "cuStreamCreate"));
    HONE_CHECK_OK(d.check_blas(d.api().cublasCreate(&s.blas_), "cublasCreate"));
    HONE_CHECK_OK(d.check_blas(d.api().cublasSetStream(s.blas_, s.stream_), "cublasSetStream"));
    HONE_CHECK_OK(d.check_blas(d.api().cublasSetMathMode(s.blas_, math_mode), "cublasSetMathMode"));
    if (dnn != nullptr) {
      s.dnn_lib_ = dnn;
      HONE_CHECK_OK(dnn->check(dnn->api().cudnnCreate(&s.dnn_), "cudnnCreate"));
      HONE_CHECK_OK(dnn->check(dnn->api().cudnnSetStream(s.dnn_, s.stream_), "cudnnSetStream"));
    }
    return {};
  };
  if (auto ok = handles(); !ok) {
    // cuBLAS and cuDNN allocate device memory for their handles, and cuDNN 9
    // reports a failed allocation there as an internal error: with less than
    // 1 GiB free, call it what it is, so that callers (tune) treat it as one.
    Error e = std::move(ok).error();
    if (auto info = d.memory_info()) {
      char where[96];
      std::snprintf(where, sizeof where, "%.2f GiB free of %.1f GiB",
                    static_cast<double>(info->first) / (1 << 30),
                    static_cast<double>(info->second) / (1 << 30));
      e.add_context("while creating a stream and its cuBLAS/cuDNN handles on " + d.description() +
                    " (" + where + ")");
      if (info->first < (size_t{1} << 30) && e.code() == ErrorCode::kInternal) {
        Error oom(ErrorCode::kOutOfMemory, e.message());
        for (const std::string& c : e.context()) oom.add_context(c);
        e = std::move(oom);
      }
    }
    return fail(std::move(e));
  }
  return s;
}

Stream::~Stream() {
  if (d_ != nullptr) (void)d_->make_current();
  if (dnn_ != nullptr) (void)dnn_lib_->api().cudnnDestroy(dnn_);
  if (blas_ != nullptr) (void)d_->api().cublasDestroy(blas_);
  if (stream_ != nullptr) (void)d_->api().cuStreamDestroy(stream_);
}

Result<void> GraphExec::begin(const Driver& d, CUstream s) {
  constexpr int kThreadLocal = 1;  // CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
  return d.check(d.api().cuStreamBeginCapture(s, kThreadLocal), "cuStreamBeginCapture");
}

Result<GraphExec> GraphExec::end(const Driver& d, CUstream s) {
  const Api& a = d.api();
  CUgraph graph = nullptr;
  HONE_CHECK_OK(d.check(a.cuStreamEndCapture(s, &graph), "cuStreamEndCapture"));
  GraphExec g;
  g.d_ = &d;
  const CUresult r = a.cuGraphInstantiateWithFlags(&g.exec_, graph, 0);
  (void)a.cuGraphDestroy(graph);  // the executable keeps what it needs
  HONE_CHECK_OK(d.check(r, "cuGraphInstantiateWithFlags"));
  return g;
}

GraphExec::~GraphExec() {
  if (exec_ != nullptr) {
    (void)d_->make_current();
    (void)d_->api().cuGraphExecDestroy(exec_);
  }
}

Result<void> GraphExec::launch(CUstream s) const {
  return d_->check(d_->api().cuGraphLaunch(exec_, s), "cuGraphLaunch");
}

Result<void> launch(const Driver& d, CUfunction f, CUstream s, unsigned blocks, unsigned threads,
                    std::vector<void*> args) {
  if (blocks == 0) return {};
  return d.check(d.api().cuLaunchKernel(f, blocks, 1, 1, threads, 1, 1, 0, s, args.data(), nullptr),
                 "cuLaunchKernel");
}

Result<void> launch_grid(const Driver& d, CUfunction f, CUstream s, unsigned gx, unsigned gy,
                         unsigned gz, unsigned bx, unsigned by, std::vector<void*> args) {
  if (gx == 0 || gy == 0 || gz == 0) return {};
  return d.check(d.api().cuLaunchKernel(f, gx, gy, gz, bx, by, 1, 0, s, args.data(), nullptr),
                 "cuLaunchKernel");
}

Result<void> launch_1d(const Driver& d, CUfunction f, CUstream s, long long n,
                       std::vector<void*> args) {
  if (n <= 0) return {};
  constexpr long long kThreads = 256;
  // Grid-stride kernels: enough blocks to fill the device, no more.
  const long long cap = std::max(1, d.multiprocessors()) * 32LL;
  const long long blocks = std::min((n + kThreads - 1) / kThreads, cap);
  return launch(d, f, s, static_cast<unsigned>(blocks), static_cast<unsigned>(kThreads),
                std::move(args));
}

}  // namespace hone::cuda
