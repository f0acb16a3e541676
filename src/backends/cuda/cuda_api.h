// Private to the cuda backend: the CUDA driver API, cuBLAS and NVRTC,
// loaded at run time with dlopen, so hone builds and runs on machines with
// no CUDA toolkit, headers or driver. We declare the few C types and
// functions we call ourselves; their C ABI is stable across CUDA releases.
//
//   HONE_TRY(const cuda::Driver* d, cuda::Driver::get());   // kUnsupportedHardware: why not
//   HONE_CHECK_OK(d->make_current());                        // on every thread that calls CUDA
//   HONE_TRY(cuda::DeviceBuffer buf, cuda::DeviceBuffer::allocate(*d, bytes));
//
// Driver::get() loads everything once per process and keeps it for the
// process's life (never dlclose'd: CUDA objects may still be released from
// static destructors). Every wrapper below is RAII and movable; device
// memory comes from cuMemAlloc (never managed memory).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "hone/error.h"
#include "hone/tensor.h"

namespace hone::cuda {

// --- the C ABI we use (names and values from the CUDA documentation) --------
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
struct CUctx_st;
struct CUstream_st;
struct CUmod_st;
struct CUfunc_st;
struct CUgraph_st;
struct CUgraphExec_st;
struct CUevent_st;
using CUcontext = CUctx_st*;
using CUstream = CUstream_st*;
using CUmodule = CUmod_st*;
using CUfunction = CUfunc_st*;
using CUgraph = CUgraph_st*;
using CUgraphExec = CUgraphExec_st*;
using CUevent = CUevent_st*;
struct cublasContext;
using cublasHandle_t = cublasContext*;
struct cudnnContext;
using cudnnHandle_t = cudnnContext*;  // cudnn_api.h
class Cudnn;
struct _nvrtcProgram;
using nvrtcProgram = _nvrtcProgram*;

inline constexpr int kCublasOpN = 0;           // CUBLAS_OP_N
inline constexpr int kCublasOpT = 1;           // CUBLAS_OP_T
inline constexpr int kCublasDefaultMath = 0;   // CUBLAS_DEFAULT_MATH: f32 stays f32 (no TF32)
inline constexpr int kCublasTf32Math = 3;      // CUBLAS_TF32_TENSOR_OP_MATH
inline constexpr int kCudaR32F = 0;            // cudaDataType CUDA_R_32F
inline constexpr int kCudaR16F = 2;            // CUDA_R_16F
inline constexpr int kCudaR16BF = 14;          // CUDA_R_16BF
inline constexpr int kCudaR8FE4M3 = 28;        // CUDA_R_8F_E4M3 (fp8.h)
inline constexpr int kCublasCompute32F = 68;   // cublasComputeType_t CUBLAS_COMPUTE_32F
inline constexpr int kCublasGemmDefault = -1;  // CUBLAS_GEMM_DEFAULT
inline constexpr int kCublasCompute32FFastTf32 = 77;  // CUBLAS_COMPUTE_32F_FAST_TF32
inline constexpr int kCublasCompute32FFast16F = 74;   // CUBLAS_COMPUTE_32F_FAST_16F
inline constexpr int kCublasCompute32FFast16BF = 75;  // CUBLAS_COMPUTE_32F_FAST_16BF

// cuBLASLt (cublasLt.h): descriptors are opaque pointers; the enum values we set.
using LtHandle = void*;  // cublasLtHandle_t, cublasLtMatmulDesc_t, cublasLtMatrixLayout_t, ...
inline constexpr int kLtDescTransA = 3;          // CUBLASLT_MATMUL_DESC_TRANSA (int32)
inline constexpr int kLtDescTransB = 4;          // CUBLASLT_MATMUL_DESC_TRANSB (int32)
inline constexpr int kLtDescEpilogue = 7;        // CUBLASLT_MATMUL_DESC_EPILOGUE (uint32)
inline constexpr int kLtDescBiasPointer = 8;     // CUBLASLT_MATMUL_DESC_BIAS_POINTER (void*)
inline constexpr int kLtEpilogueDefault = 1;     // CUBLASLT_EPILOGUE_DEFAULT
inline constexpr int kLtEpilogueBias = 4;        // CUBLASLT_EPILOGUE_BIAS
inline constexpr int kLtEpilogueGeluBias = 36;   // CUBLASLT_EPILOGUE_GELU_BIAS (tanh form)
inline constexpr int kLtDescAScalePointer = 17;  // CUBLASLT_MATMUL_DESC_A_SCALE_POINTER (float*)
inline constexpr int kLtDescBScalePointer = 18;  // CUBLASLT_MATMUL_DESC_B_SCALE_POINTER (float*)
inline constexpr int kLtDescBiasDataType = 26;   // CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE (int32)
inline constexpr int kLtPrefMaxWorkspace = 1;  // CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES (uint64)
/// cublasLtMatmulAlgo_t and cublasLtMatmulHeuristicResult_t.
struct LtAlgo {
  uint64_t data[8];
};
struct LtHeuristic {
  LtAlgo algo;
  size_t workspace_size;
  int state;
  float waves;
  int reserved[4];
};
static_assert(sizeof(LtHeuristic) == 96, "cublasLtMatmulHeuristicResult_t's layout");

/// Function pointers, filled by Driver::get().
struct Api {
  // driver (libcuda.so.1)
  CUresult (*cuInit)(unsigned) = nullptr;
  CUresult (*cuDeviceGetCount)(int*) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice*, int) = nullptr;
  CUresult (*cuDeviceGetName)(char*, int, CUdevice) = nullptr;
  CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice) = nullptr;
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*cuCtxSetCurrent)(CUcontext) = nullptr;
  CUresult (*cuMemAlloc)(CUdeviceptr*, size_t) = nullptr;
  CUresult (*cuMemFree)(CUdeviceptr) = nullptr;
  CUresult (*cuMemGetInfo)(size_t*, size_t*) = nullptr;
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void*, size_t, CUstream) = nullptr;
  CUresult (*cuMemcpyDtoHAsync)(void*, CUdeviceptr, size_t, CUstream) = nullptr;
  CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream) = nullptr;
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void*, size_t) = nullptr;
  CUresult (*cuStreamCreate)(CUstream*, unsigned) = nullptr;
  CUresult (*cuStreamDestroy)(CUstream) = nullptr;
  CUresult (*cuStreamSynchronize)(CUstream) = nullptr;
  CUresult (*cuModuleLoadData)(CUmodule*, const void*) = nullptr;
  CUresult (*cuModuleUnload)(CUmodule) = nullptr;
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, CUstream, void**, void**) = nullptr;
  CUresult (*cuStreamBeginCapture)(CUstream, int) = nullptr;
  CUresult (*cuStreamEndCapture)(CUstream, CUgraph*) = nullptr;
  CUresult (*cuGraphInstantiateWithFlags)(CUgraphExec*, CUgraph, unsigned long long) = nullptr;
  CUresult (*cuGraphLaunch)(CUgraphExec, CUstream) = nullptr;
  CUresult (*cuGraphExecDestroy)(CUgraphExec) = nullptr;
  CUresult (*cuGraphDestroy)(CUgraph) = nullptr;
  CUresult (*cuMemsetD32Async)(CUdeviceptr, unsigned, size_t, CUstream) = nullptr;
  CUresult (*cuMemHostAlloc)(void**, size_t, unsigned) = nullptr;
  CUresult (*cuMemFreeHost)(void*) = nullptr;
  CUresult (*cuPointerGetAttribute)(void*, int, CUdeviceptr) = nullptr;
  CUresult (*cuEventCreate)(CUevent*, unsigned) = nullptr;
  CUresult (*cuEventRecord)(CUevent, CUstream) = nullptr;
  CUresult (*cuEventSynchronize)(CUevent) = nullptr;
  CUresult (*cuEventElapsedTime)(float*, CUevent, CUevent) = nullptr;
  CUresult (*cuEventDestroy)(CUevent) = nullptr;
  CUresult (*cuStreamWaitEvent)(CUstream, CUevent, unsigned) = nullptr;
  CUresult (*cuGetErrorName)(CUresult, const char**) = nullptr;
  CUresult (*cuGetErrorString)(CUresult, const char**) = nullptr;
  // cuBLAS (libcublas.so.N)
  int (*cublasCreate)(cublasHandle_t*) = nullptr;
  int (*cublasDestroy)(cublasHandle_t) = nullptr;
  int (*cublasSetStream)(cublasHandle_t, CUstream) = nullptr;
  int (*cublasSetMathMode)(cublasHandle_t, int) = nullptr;
  int (*cublasSgemm)(cublasHandle_t, int, int, int, int, int, const float*, const float*, int,
                     const float*, int, const float*, float*, int) = nullptr;
  int (*cublasSgemmStridedBatched)(cublasHandle_t, int, int, int, int, int, const float*,
                                   const float*, int, long long, const float*, int, long long,
                                   const float*, float*, int, long long, int) = nullptr;
  // cublasGemmStridedBatchedEx: data types and compute type are the C enums' ints.
  int (*cublasGemmStridedBatchedEx)(cublasHandle_t, int, int, int, int, int, const void*,
                                    const void*, int, int, long long, const void*, int, int,
                                    long long, const void*, void*, int, int, long long, int, int,
                                    int) = nullptr;
  // cuBLASLt (libcublasLt.so.N), optional: null when not found (Driver::lt_why_not).
  int (*cublasLtCreate)(LtHandle*) = nullptr;
  int (*cublasLtMatmulDescCreate)(LtHandle*, int, int) = nullptr;
  int (*cublasLtMatmulDescDestroy)(LtHandle) = nullptr;
  int (*cublasLtMatmulDescSetAttribute)(LtHandle, int, const void*, size_t) = nullptr;
  int (*cublasLtMatrixLayoutCreate)(LtHandle*, int, uint64_t, uint64_t, int64_t) = nullptr;
  int (*cublasLtMatrixLayoutDestroy)(LtHandle) = nullptr;
  int (*cublasLtMatmulPreferenceCreate)(LtHandle*) = nullptr;
  int (*cublasLtMatmulPreferenceDestroy)(LtHandle) = nullptr;
  int (*cublasLtMatmulPreferenceSetAttribute)(LtHandle, int, const void*, size_t) = nullptr;
  int (*cublasLtMatmulAlgoGetHeuristic)(LtHandle, LtHandle, LtHandle, LtHandle, LtHandle, LtHandle,
                                        LtHandle, int, LtHeuristic*, int*) = nullptr;
  int (*cublasLtMatmul)(LtHandle, LtHandle, const void*, const void*, LtHandle, const void*,
                        LtHandle, const void*, const void*, LtHandle, void*, LtHandle,
                        const LtAlgo*, void*, size_t, CUstream) = nullptr;
  /// CUBLASLT_VERSION of the loaded library (major * 10000 + minor * 100 +
  /// patch); optional, null in a library without it.
  size_t (*cublasLtGetVersion)() = nullptr;
  // NVRTC (libnvrtc.so.N)
  int (*nvrtcCreateProgram)(nvrtcProgram*, const char*, const char*, int, const char* const*,
                            const char* const*) = nullptr;
  int (*nvrtcCompileProgram)(nvrtcProgram, int, const char* const*) = nullptr;
  int (*nvrtcGetPTXSize)(nvrtcProgram, size_t*) = nullptr;
  int (*nvrtcGetPTX)(nvrtcProgram, char*) = nullptr;
  int (*nvrtcGetProgramLogSize)(nvrtcProgram, size_t*) = nullptr;
  int (*nvrtcGetProgramLog)(nvrtcProgram, char*) = nullptr;
  int (*nvrtcDestroyProgram)(nvrtcProgram*) = nullptr;
  const char* (*nvrtcGetErrorString)(int) = nullptr;
};

/// Library names tried, in order, for each of the three libraries.
struct LibraryNames {
  std::vector<std::string> driver{"libcuda.so.1"};
  std::vector<std::string> cublas{"libcublas.so.13", "libcublas.so.12", "libcublas.so.11",
                                  "libcublas.so"};
  std::vector<std::string> nvrtc{"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2",
                                 "libnvrtc.so"};
  std::vector<std::string> cublas_lt{"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"};
};

class Driver {
 public:
  /// The process-wide driver on device $HONE_CUDA_DEVICE (default 0; under
  /// mpirun each rank's local rank), loaded on first use. Fails with
  /// kUnsupportedHardware and a reason starting "no CUDA device: " when the
  /// driver library is missing or sees no device, or naming the missing
  /// cuBLAS/NVRTC library. Thread-safe; the answer never changes.
  [[nodiscard]] static Result<const Driver*> get();
  /// Loads from `names` without touching the process-wide driver: the same
  /// checks, for tests that need the failure path on any machine. The
  /// returned driver is leaked on purpose (see the header comment).
  [[nodiscard]] static Result<const Driver*> probe(const LibraryNames& names);

  const Api& api() const { return api_; }
  /// Makes the device's primary context current on the calling thread.
  [[nodiscard]] Result<void> make_current() const;
  /// "NVIDIA H200 (sm_90)".
  const std::string& description() const { return description_; }
  int cc_major() const { return cc_major_; }
  int cc_minor() const { return cc_minor_; }
  int multiprocessors() const { return sms_; }
  /// The device's ordinal (HONE_CUDA_DEVICE, default 0).
  int ordinal() const { return ordinal_; }
  /// The process's cuBLASLt handle, or null when cuBLASLt was not found
  /// (lt_why_not() says why); matrix products then use cuBLAS alone.
  LtHandle lt() const { return lt_; }
  const std::string& lt_why_not() const { return lt_why_not_; }
  /// cublasLtGetVersion() of the loaded cuBLASLt (120304: 12.3.4), or 0
  /// when it has none or none was loaded.
  size_t lt_version() const { return lt_version_; }

  /// A driver-API result as an Error ("cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY
  /// (out of memory)"), or success.
  Result<void> check(CUresult r, const char* what) const;
  /// cuMemAlloc of `bytes` on the current context; an out-of-memory failure
  /// names the size asked for and the device's free and total memory then
  /// ("... 4294967296 bytes of device memory (1.2 GiB free of 79.1 GiB on
  /// NVIDIA H100 80GB HBM3)").
  Result<void> allocate(CUdeviceptr* ptr, size_t bytes) const;
  /// The device's free and total memory in bytes (cuMemGetInfo), as seen
  /// from the current context.
  Result<std::pair<size_t, size_t>> memory_info() const;
  Result<void> check_blas(int status, const char* what) const;

 private:
  Driver() = default;
  Api api_;
  CUcontext ctx_ = nullptr;
  CUdevice device_ = 0;
  int ordinal_ = 0;
  int cc_major_ = 0, cc_minor_ = 0, sms_ = 0;
  std::string description_;
  LtHandle lt_ = nullptr;
  std::string lt_why_not_;
  size_t lt_version_ = 0;
};

/// Device memory; freed on destruction.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  [[nodiscard]] static Result<DeviceBuffer> allocate(const Driver& d, size_t bytes);
  /// A buffer holding a copy of `bytes` host bytes from `data`.
  [[nodiscard]] static Result<DeviceBuffer> upload(const Driver& d, const void* data, size_t bytes);
  DeviceBuffer(DeviceBuffer&& o) noexcept { swap(o); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    DeviceBuffer t(std::move(o));
    swap(t);
    return *this;
  }
  ~DeviceBuffer();
  CUdeviceptr ptr() const { return ptr_; }
  size_t bytes() const { return bytes_; }

 private:
  void swap(DeviceBuffer& o) noexcept {
    std::swap(d_, o.d_);
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
  }
  const Driver* d_ = nullptr;
  CUdeviceptr ptr_ = 0;
  size_t bytes_ = 0;
};

/// `v` as the bits of a bf16 (`half` kCudaR16BF) or f16 (kCudaR16F), rounded
/// to nearest even: constants converted on the host for bf16/fp16 products.
uint16_t half_bits(float v, int half);
/// `n` f32 values as bf16/f16 (`half`) on the device.
[[nodiscard]] Result<DeviceBuffer> upload_half(const Driver& d, const float* f, size_t n, int half);

/// Page-locked host memory (cuMemHostAlloc), which the GPU's copy engines
/// read directly; freed on destruction.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  [[nodiscard]] static Result<PinnedBuffer> allocate(const Driver& d, size_t bytes);
  PinnedBuffer(PinnedBuffer&& o) noexcept { swap(o); }
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
    PinnedBuffer t(std::move(o));
    swap(t);
    return *this;
  }
  ~PinnedBuffer();
  char* data() const { return static_cast<char*>(ptr_); }
  size_t bytes() const { return bytes_; }

 private:
  void swap(PinnedBuffer& o) noexcept {
    std::swap(d_, o.d_);
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
  }
  const Driver* d_ = nullptr;
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

/// Page-locked blocks for the outputs of execute() (and the tensors of
/// allocate_host()), kept for reuse: cuMemHostAlloc costs about a
/// millisecond per few MB, and a 12.6 MB output (bert-base at batch 32)
/// reaches page-locked memory in 0.23 ms by one DMA against about 1 ms
/// through a staging buffer and a CPU copy. A tensor's storage goes back to
/// the pool when its last owner drops it; the pool keeps at most 512 MiB of
/// free blocks (the oldest go first), blocks of one size class each (up to
/// an eighth larger than asked). Process-wide, thread-safe.
class PinnedPool {
 public:
  /// A tensor of `dtype` and `shape` in a page-locked block, its bytes
  /// unspecified (the caller overwrites them); an error when page-locked
  /// memory is refused (RLIMIT_MEMLOCK in a container, say).
  [[nodiscard]] static Result<Tensor> tensor(const Driver& d, DType dtype,
                                             std::vector<int64_t> shape);
  /// Frees every free block; the bytes released.
  static size_t trim();
};

/// Copies `bytes` from pageable host memory to the device on `s`: copies of
/// 2 MiB or more go through `staging` (which must hold staging_offset +
/// bytes) in 1 MiB chunks, copied by a process-wide pool of up to 8 threads,
/// each chunk sent as soon as it is copied, so the CPU copies and the DMA
/// overlap; the driver's own pageable path is one CPU thread behind a bounce
/// buffer. `staging` must stay untouched until `s` has finished the copy.
[[nodiscard]] Result<void> upload(const Driver& d, CUstream s, PinnedBuffer& staging,
                                  size_t staging_offset, CUdeviceptr dst, const void* src,
                                  size_t bytes);

/// Whether the `bytes` at `p` are page-locked host memory that the copy
/// engines read directly (cuMemHostAlloc'd or registered, by hone or by
/// another library): such an input needs no staging copy.
bool is_pinned(const Driver& d, const void* p, size_t bytes);

/// memcpy of `bytes`, split into 1 MiB chunks over upload()'s thread pool
/// from 2 MiB on: a large output leaves the pinned buffer it was downloaded
/// to (a DMA at the link's speed) several times faster than one thread
/// copies it.
void parallel_copy(void* dst, const void* src, size_t bytes);

/// A loaded module of kernels compiled from CUDA C++ source by NVRTC.
class Module {
 public:
  /// Compiles `source` for this device (PTX, JIT-compiled by the driver) and
  /// loads it. kInternal with NVRTC's log on a compile error.
  [[nodiscard]] static Result<Module> compile(const Driver& d, const std::string& source,
                                              const std::string& name);
  Module() = default;
  Module(Module&& o) noexcept : d_(o.d_), mod_(o.mod_) { o.mod_ = nullptr; }
  Module& operator=(Module&& o) noexcept {
    std::swap(d_, o.d_);
    std::swap(mod_, o.mod_);
    return *this;
  }
  ~Module();
  [[nodiscard]] Result<CUfunction> function(const std::string& name) const;

 private:
  const Driver* d_ = nullptr;
  CUmodule mod_ = nullptr;
};

/// A stream and a cuBLAS handle (and a cuDNN one, when given) bound to it:
/// what one inference at a time uses.
class Stream {
 public:
  /// `math_mode`: kCublasDefaultMath (strict f32) or kCublasTf32Math.
  [[nodiscard]] static Result<Stream> create(const Driver& d, int math_mode = kCublasDefaultMath,
                                             const Cudnn* dnn = nullptr);
  Stream() = default;
  Stream(Stream&& o) noexcept
      : d_(o.d_), dnn_lib_(o.dnn_lib_), stream_(o.stream_), blas_(o.blas_), dnn_(o.dnn_) {
    o.stream_ = nullptr;
    o.blas_ = nullptr;
    o.dnn_ = nullptr;
  }
  Stream& operator=(Stream&&) = delete;
  ~Stream();
  CUstream get() const { return stream_; }
  cublasHandle_t blas() const { return blas_; }
  /// Null when the stream was made without cuDNN.
  cudnnHandle_t dnn() const { return dnn_; }

 private:
  const Driver* d_ = nullptr;
  const Cudnn* dnn_lib_ = nullptr;
  CUstream stream_ = nullptr;
  cublasHandle_t blas_ = nullptr;
  cudnnHandle_t dnn_ = nullptr;
};

/// The work one stream enqueued between begin() and end(), replayed as one
/// CUDA graph: a signature's hundreds of launches cost one launch.
class GraphExec {
 public:
  /// Starts capturing `s` (this thread's calls only). Every enqueue on `s`
  /// until end() is recorded, not run.
  [[nodiscard]] static Result<void> begin(const Driver& d, CUstream s);
  /// Ends the capture begun on `s` and instantiates it; on failure the
  /// capture is ended and dropped, and the stream is usable again.
  [[nodiscard]] static Result<GraphExec> end(const Driver& d, CUstream s);
  GraphExec() = default;
  GraphExec(GraphExec&& o) noexcept : d_(o.d_), exec_(o.exec_) { o.exec_ = nullptr; }
  GraphExec& operator=(GraphExec&& o) noexcept {
    std::swap(d_, o.d_);
    std::swap(exec_, o.exec_);
    return *this;
  }
  ~GraphExec();
  [[nodiscard]] Result<void> launch(CUstream s) const;

 private:
  const Driver* d_ = nullptr;
  CUgraphExec exec_ = nullptr;
};

/// Launches `f` on a 1-D grid covering `n` work items (grid-stride kernels).
[[nodiscard]] Result<void> launch_1d(const Driver& d, CUfunction f, CUstream s, long long n,
                                     std::vector<void*> args);
/// Launches `f` with `blocks` blocks of `threads` threads.
[[nodiscard]] Result<void> launch(const Driver& d, CUfunction f, CUstream s, unsigned blocks,
                                  unsigned threads, std::vector<void*> args);
/// Launches `f` on a grid of gx × gy × gz blocks of bx × by threads.
[[nodiscard]] Result<void> launch_grid(const Driver& d, CUfunction f, CUstream s, unsigned gx,
                                       unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                       std::vector<void*> args);

}  // namespace hone::cuda
