// Private to the cuda backend: cuDNN 9's legacy convolution API, loaded at
// run time with dlopen like cuBLAS (cuda_api.h), so hone builds with no cuDNN
// headers or library and runs without cuDNN (convolutions then fall back to
// im2col + cuBLAS, and Cudnn::get() says why). We declare only the handful of
// C types, enum values and functions that hone calls, with the values from
// cuDNN's documentation; the legacy API's C ABI is stable across cuDNN 8 and 9.
//
//   HONE_TRY(const cuda::Cudnn* dnn, cuda::Cudnn::get());   // kUnsupportedHardware: why not
//   dnn->api().cudnnConvolutionForward(...);
//
// Where it looks, in order (the first that loads wins):
//   1. $HONE_CUDNN_PATH: the library file itself, or the folder holding libcudnn.so.9;
//   2. libcudnn.so.9 through the dynamic loader (LD_LIBRARY_PATH, the ld.so cache: CUDA's
//      and Debian's packages);
//   3. PyTorch's pip wheel, nvidia/cudnn/lib/ in site-packages or dist-packages of python3.*
//      under $VIRTUAL_ENV, $CONDA_PREFIX, $HOME/.local, /usr/local and /usr;
//   4. /usr/local/cuda/lib64.
#pragma once

#include <cstddef>
#include <mutex>
#include <string>
#include <vector>

#include "backends/cuda/cuda_api.h"
#include "hone/error.h"

namespace hone::cuda {

struct cudnnTensorStruct;
struct cudnnFilterStruct;
struct cudnnConvolutionStruct;
struct cudnnActivationStruct;
using cudnnTensorDescriptor_t = cudnnTensorStruct*;
using cudnnFilterDescriptor_t = cudnnFilterStruct*;
using cudnnConvolutionDescriptor_t = cudnnConvolutionStruct*;
using cudnnActivationDescriptor_t = cudnnActivationStruct*;

inline constexpr int kDnnNchw = 0;              // CUDNN_TENSOR_NCHW
inline constexpr int kDnnNhwc = 1;              // CUDNN_TENSOR_NHWC (filters: KRSC)
inline constexpr int kDnnFloat = 0;             // CUDNN_DATA_FLOAT
inline constexpr int kDnnHalf = 2;              // CUDNN_DATA_HALF
inline constexpr int kDnnBfloat16 = 9;          // CUDNN_DATA_BFLOAT16
inline constexpr int kDnnCrossCorrelation = 1;  // CUDNN_CROSS_CORRELATION (ONNX's Conv)
inline constexpr int kDnnDefaultMath = 0;       // CUDNN_DEFAULT_MATH: TF32 allowed
inline constexpr int kDnnTensorOpMath = 1;      // CUDNN_TENSOR_OP_MATH: bf16/f16 tensor cores
inline constexpr int kDnnFmaMath = 3;           // CUDNN_FMA_MATH: strict f32, no tensor cores
inline constexpr int kDnnActRelu = 1;           // CUDNN_ACTIVATION_RELU
inline constexpr int kDnnNotPropagateNan = 0;   // CUDNN_NOT_PROPAGATE_NAN
inline constexpr int kDnnAlgoImplicitPrecomp =
    1;  // CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM

/// cudnnConvolutionFwdAlgoPerf_t.
struct DnnAlgoPerf {
  int algo;
  int status;
  float time;
  size_t memory;
  int determinism;
  int math_type;
  int reserved[3];
};

struct CudnnApi {
  size_t (*cudnnGetVersion)() = nullptr;
  const char* (*cudnnGetErrorString)(int) = nullptr;
  int (*cudnnCreate)(cudnnHandle_t*) = nullptr;
  int (*cudnnDestroy)(cudnnHandle_t) = nullptr;
  int (*cudnnSetStream)(cudnnHandle_t, CUstream) = nullptr;
  int (*cudnnCreateTensorDescriptor)(cudnnTensorDescriptor_t*) = nullptr;
  int (*cudnnDestroyTensorDescriptor)(cudnnTensorDescriptor_t) = nullptr;
  int (*cudnnSetTensor4dDescriptor)(cudnnTensorDescriptor_t, int, int, int, int, int,
                                    int) = nullptr;
  // (desc, data type, rank, dims, strides): a 3-D conv's NCDHW tensors.
  int (*cudnnSetTensorNdDescriptor)(cudnnTensorDescriptor_t, int, int, const int*,
                                    const int*) = nullptr;
  int (*cudnnCreateFilterDescriptor)(cudnnFilterDescriptor_t*) = nullptr;
  int (*cudnnDestroyFilterDescriptor)(cudnnFilterDescriptor_t) = nullptr;
  int (*cudnnSetFilter4dDescriptor)(cudnnFilterDescriptor_t, int, int, int, int, int,
                                    int) = nullptr;
  // (desc, data type, format, rank, dims).
  int (*cudnnSetFilterNdDescriptor)(cudnnFilterDescriptor_t, int, int, int, const int*) = nullptr;
  int (*cudnnCreateConvolutionDescriptor)(cudnnConvolutionDescriptor_t*) = nullptr;
  int (*cudnnDestroyConvolutionDescriptor)(cudnnConvolutionDescriptor_t) = nullptr;
  int (*cudnnSetConvolution2dDescriptor)(cudnnConvolutionDescriptor_t, int, int, int, int, int, int,
                                         int, int) = nullptr;
  // (desc, spatial rank, pads, strides, dilations, mode, compute type).
  int (*cudnnSetConvolutionNdDescriptor)(cudnnConvolutionDescriptor_t, int, const int*, const int*,
                                         const int*, int, int) = nullptr;
  int (*cudnnSetConvolutionGroupCount)(cudnnConvolutionDescriptor_t, int) = nullptr;
  int (*cudnnSetConvolutionMathType)(cudnnConvolutionDescriptor_t, int) = nullptr;
  int (*cudnnCreateActivationDescriptor)(cudnnActivationDescriptor_t*) = nullptr;
  int (*cudnnDestroyActivationDescriptor)(cudnnActivationDescriptor_t) = nullptr;
  int (*cudnnSetActivationDescriptor)(cudnnActivationDescriptor_t, int, int, double) = nullptr;
  int (*cudnnFindConvolutionForwardAlgorithm)(cudnnHandle_t, cudnnTensorDescriptor_t,
                                              cudnnFilterDescriptor_t, cudnnConvolutionDescriptor_t,
                                              cudnnTensorDescriptor_t, int, int*,
                                              DnnAlgoPerf*) = nullptr;
  int (*cudnnGetConvolutionForwardAlgorithm_v7)(cudnnHandle_t, cudnnTensorDescriptor_t,
                                                cudnnFilterDescriptor_t,
                                                cudnnConvolutionDescriptor_t,
                                                cudnnTensorDescriptor_t, int, int*,
                                                DnnAlgoPerf*) = nullptr;
  int (*cudnnGetConvolutionForwardWorkspaceSize)(cudnnHandle_t, cudnnTensorDescriptor_t,
                                                 cudnnFilterDescriptor_t,
                                                 cudnnConvolutionDescriptor_t,
                                                 cudnnTensorDescriptor_t, int, size_t*) = nullptr;
  int (*cudnnConvolutionForward)(cudnnHandle_t, const void*, cudnnTensorDescriptor_t, const void*,
                                 cudnnFilterDescriptor_t, const void*, cudnnConvolutionDescriptor_t,
                                 int, void*, size_t, const void*, cudnnTensorDescriptor_t,
                                 void*) = nullptr;
  int (*cudnnConvolutionBiasActivationForward)(cudnnHandle_t, const void*, cudnnTensorDescriptor_t,
                                               const void*, cudnnFilterDescriptor_t, const void*,
                                               cudnnConvolutionDescriptor_t, int, void*, size_t,
                                               const void*, cudnnTensorDescriptor_t, const void*,
                                               cudnnTensorDescriptor_t, const void*,
                                               cudnnActivationDescriptor_t, cudnnTensorDescriptor_t,
                                               void*) = nullptr;
};

class Cudnn {
 public:
  /// The process-wide cuDNN, loaded on first use from the list above; needs
  /// the CUDA driver (Driver::get()) first. kUnsupportedHardware naming what
  /// was tried when none loads. Thread-safe; the answer never changes.
  [[nodiscard]] static Result<const Cudnn*> get();
  /// The candidates of the search list above, on this machine, in order.
  static std::vector<std::string> candidates();

  const CudnnApi& api() const { return api_; }
  /// "cuDNN 9.10.2 (/path/libcudnn.so.9)".
  const std::string& description() const { return description_; }
  /// A cuDNN status as an Error ("cudnnConvolutionForward: CUDNN_STATUS_BAD_PARAM"), or success.
  Result<void> check(int status, const char* what) const;
  /// A handle for planning (algorithm search) on the default stream, shared
  /// by every caller under `planning_mutex()`.
  cudnnHandle_t planning_handle() const { return planning_; }
  std::mutex& planning_mutex() const;

 private:
  Cudnn() = default;
  static Result<const Cudnn*> load();
  CudnnApi api_;
  std::string description_;
  cudnnHandle_t planning_ = nullptr;
};

}  // namespace hone::cuda
