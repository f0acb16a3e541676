// The cuda backend: f32 inference on an NVIDIA GPU through the CUDA driver
// API, cuBLAS and NVRTC, all loaded at run time (cuda_api.h), so hone builds
// and runs where CUDA is absent; there the registry marks it unavailable
// ("no CUDA device: ...") and build() fails with kUnsupportedHardware.
//
//   auto be = std::make_unique<cuda::CudaBackend>();
//   HONE_CHECK_OK(be->build(graph));              // uploads weights, compiles kernels
//   HONE_TRY(auto y, be->infer({x}));  be->kernel_executions();  // > 0: GPU kernels ran
//
// Ops: Conv (cuDNN, with the residual Add and Relu fused, when found, and under
// bf16/fp16 also cuDNN on bf16/f16 NHWC copies; else im2col + SGEMM and a direct
// depthwise kernel), Gemm/MatMul (SGEMM, batched; MatMul + constant bias as
// one unit, cuBLASLt's bias epilogue when found), attention blocks as one unit (fused
// flash-style kernels timed against the unfused path, ops_attention.cpp), element-wise
// chains fused into one generated kernel each (the epilogue of dense ops),
// pools, Softmax/LogSoftmax, LayerNormalization, ReduceMean/Sum/Max,
// Transpose, Concat, standalone BatchNormalization, constant-mode Pad, Gather
// (by known indices, or by i64/i32 indices read on the device: an embedding),
// Cast to f32 (from i64/i32: integer block inputs keep their dtype on the
// device), and views; everything else runs on the reference
// through CompilingBackend, with copies to and from the device at block edges.
// precision=fp32 (strict) | tf32 | bf16 | fp16 (MathSettings): bf16/fp16 run matrix
// products and convolutions on bf16/f16 operands (weights converted once when a block
// compiles or a conv is planned) with f32 sums. Between steps, tensors stay f32
// (activations=f32) or live in bf16/f16 (activations=half, storage.h);
// activations=auto, the default, times both per block and shape signature and
// keeps the faster, recorded in kernel_choices like the kernels below.
// precision=fp8 (compute capability 8.9 or newer, fp8.h) runs as bf16 with
// half activations, but for the products by constant weights: cuBLASLt in
// FP8 (e4m3 with per-tensor scales, the activation's computed per call).
// Kernels chosen by timing at plan time (conv_select, gemm_select,
// attention_select, gemm_epilogue, cuDNN's algorithm search) are recorded per
// unit, input shapes and precision in the config field kernel_choices
// (kernel_choices.h) as they are made, so a package saved after the tune
// replays them untimed; selections() counts what was timed and replayed.
// The field grows when a new shape is planned: read the config when no
// inference is planning one (a tune reads it after its runs).
// Lifecycle per block: compile() uploads the block's f32 constants once and
// compiles its chains into one module; each input-shape signature gets a plan
// (kernels, device offsets), cached under a mutex. infer() is thread-safe:
// each call takes its own stream, cuBLAS handle and device arena from a pool
// (made on demand, reused after), so concurrent calls do not share buffers.
// Device-resident calls (infer_on_device, device_io.cpp) read their inputs
// from device memory and leave the outputs there, on the caller's stream;
// transfers() counts every host/device copy of block inputs and outputs.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "backends/common/compiling_backend.h"
#include "backends/cuda/kernel_choices.h"

namespace hone::cuda {

struct StreamPool;
class Cudnn;
class Driver;

/// attention_select: how an attention block runs (ops_attention.cpp).
enum class AttentionSelect {
  kTime,     // time the fused kernels that accept the shapes against the unfused path
  kFused,    // a fused kernel whenever one accepts the shapes
  kUnfused,  // the member nodes' own kernels (no attention unit)
};

/// conv_select: how a conv's kernel is chosen (ops_conv.cpp).
enum class ConvSelect {
  kTime,       // time the candidates that accept the geometry (cuDNN, im2col + cuBLAS, and
               // under bf16/fp16 cuDNN in bf16/f16 NHWC) and keep the fastest
  kCudnn,      // cuDNN (f32 data) wherever it can run the conv
  kCudnnNhwc,  // bf16/fp16 only: cuDNN in bf16/f16 NHWC wherever it can run it, else as kCudnn
};

/// What the precision setting sets: the math of matrix products and
/// convolutions.
struct MathSettings {
  bool tf32 = false;  // tensor-op math allowed: TF32 for f32 data (tf32, bf16, fp16)
  /// The operand type of every matrix product: 0 runs cublasSgemm on the f32
  /// data (strict or TF32 by the handle's math mode); kCudaR16BF or kCudaR16F
  /// run cublasGemmStridedBatchedEx on bf16 / f16 operands (constant weights
  /// converted once at build, activations by a kernel before each product)
  /// into an f32 result, summed in f32 (CUBLAS_COMPUTE_32F).
  int half = 0;
  /// activations=half or auto (with half != 0): a block's Program may keep
  /// values between its steps in bf16/f16, rank-4 ones channels-last, with
  /// conversions only where a reader needs f32 (storage.h), and the half
  /// chain kernels are compiled; false: every tensor between steps is f32.
  bool half_activations = false;
  /// activations=auto (with half_activations): each block builds its
  /// Program both ways per input signature and keeps the one that times
  /// faster, recorded in kernel_choices (activations_choice.h).
  bool activations_auto = false;
  Precision precision = Precision::kFp32;
  /// precision=fp8: everything as under bf16 with half activations (half is
  /// kCudaR16BF), but the products by a constant weight in FP8 (fp8.h).
  bool fp8 = false;
  /// to_string(precision): the name kernel choices are recorded under
  /// (fp32, tf32, bf16, fp16 or fp8).
  std::string mode = "fp32";
};

/// What cudnn, cudnn_depthwise, cudnn_fused and conv_select set: how
/// convolutions run (ops_conv.cpp).
struct ConvSettings {
  const Cudnn* dnn = nullptr;  // null: im2col + cuBLAS for every conv
  std::string why_not;         // why dnn is null ("cudnn=false", "cuDNN not found ...")
  bool depthwise_on_dnn = true;
  bool fused_relu = true;  // Relu (and the residual) inside cudnnConvolutionBiasActivationForward
  ConvSelect select = ConvSelect::kTime;
};

/// What gemm_select and gemm_epilogue set: how matrix products are chosen
/// and fused (ops_dense.cpp, ops_mlp.cpp; the products in gemm.cpp).
struct GemmSettings {
  /// gemm_select=time: under bf16/fp16, each matrix-product shape times its
  /// bf16/f16 candidate against SGEMM in TF32 and keeps the faster.
  bool by_time = true;
  /// gemm_epilogue: a MatMul by a constant weight and the Add of a constant
  /// bias after it are one unit (cuBLASLt's bias epilogue, or the bias
  /// broadcast into the output and added to by the product; timed).
  bool epilogue = true;
};

/// Everything a build's ops read from the config, grouped by what it sets.
struct BuildSettings {
  MathSettings math;
  ConvSettings conv;
  GemmSettings gemm;
  AttentionSelect attention = AttentionSelect::kTime;  // attention_select (ops_attention.cpp)
  /// This backend's record of timed choices (kernel_choices.h), shared by
  /// its blocks' ops: replayed before anything is timed, added to after.
  std::shared_ptr<KernelChoices> choices;
  /// Mixed precision (the fp32_nodes field), under bf16/fp16/fp8: a unit
  /// with one of these nodes among its members is made with f32_math(), on
  /// f32 tensors (CudaBlock::init). Null or empty: none.
  std::shared_ptr<const std::set<std::string>> fp32_nodes;
  /// These settings for a unit kept in fp32: f32 operands and activations,
  /// TF32 tensor-op math as the reduced precisions allow f32 products (the
  /// streams' cuBLAS handles are made in that mode), choices recorded under
  /// "tf32".
  BuildSettings f32_math() const;
};

/// Counters shared by the backend and its blocks.
struct Stats {
  std::atomic<uint64_t> kernel_executions{0};
  std::atomic<uint64_t> fallback_runs{0};
  std::atomic<uint64_t> device_ns{0};  // device time of the blocks' steps (copies excluded)
  // Copies of block inputs and outputs (transfers()): host to device, device
  // to host, device to device; each a count and bytes.
  std::atomic<uint64_t> h2d{0}, h2d_bytes{0}, d2h{0}, d2h_bytes{0}, d2d{0}, d2d_bytes{0};
  void count_h2d(size_t bytes) { count(h2d, h2d_bytes, bytes); }
  void count_d2h(size_t bytes) { count(d2h, d2h_bytes, bytes); }
  void count_d2d(size_t bytes) { count(d2d, d2d_bytes, bytes); }
  static void count(std::atomic<uint64_t>& n, std::atomic<uint64_t>& b, size_t bytes) {
    n.fetch_add(1, std::memory_order_relaxed);
    b.fetch_add(bytes, std::memory_order_relaxed);
  }
  mutable std::mutex mu;
  std::vector<std::string> kernel_lines;
  std::set<std::string> seen;
};

class CudaBackend final : public CompilingBackend {
 public:
  CudaBackend();
  ~CudaBackend() override;
  static const BackendCapabilities& caps();
  /// Why this machine cannot run the backend ("no CUDA device: libcuda.so.1
  /// not found (...)"), or "" when it can. Loads the CUDA libraries once.
  static std::string unavailable_reason();

  std::string_view name() const override { return "cuda"; }
  const BackendCapabilities& capabilities() const override { return caps(); }

  /// Units run by this backend's GPU kernels (one per unit per inference;
  /// views, which launch nothing, are not counted).
  uint64_t kernel_executions() const { return stats_->kernel_executions.load(); }
  /// Block runs that went to the reference because no plan fit the shapes.
  uint64_t fallback_runs() const { return stats_->fallback_runs.load(); }
  /// Device time of every block's steps, between its input and output copies
  /// (CUDA events around them on the block's stream).
  std::optional<uint64_t> device_nanoseconds() const override { return stats_->device_ns.load(); }
  /// Page-locked host memory (cuMemHostAlloc): inputs in it reach the device
  /// in one DMA, with no staging copy. Ordinary memory where no GPU is.
  [[nodiscard]] Result<Tensor> allocate_host(DType dtype,
                                             std::vector<int64_t> shape) const override;
  /// A graph that runs as one cuda block runs on the device with no host
  /// copy: the inputs are copied device to device into the block's arena on
  /// one of hone's streams, which first waits for `call.stream` (an event);
  /// the outputs are copied out into memory from a process-wide pool of
  /// device blocks (given back when the last owner drops them) or into
  /// `call.outputs`, and `call.stream` then waits for hone's stream. Any
  /// other graph (nodes on the reference, several blocks, a shape whose plan
  /// failed) is staged through host memory: inputs down, infer(), outputs
  /// up, on `call.stream`, synchronously, every copy counted in transfers()
  /// and the first such call logged with the reason. Kernel faults surface
  /// at the caller's next synchronization. Device time is added to
  /// device_nanoseconds() only when `call.synchronize`.
  [[nodiscard]] Result<DeviceTensor> to_device(const Tensor& t) const override;
  [[nodiscard]] Result<Tensor> to_host(const DeviceTensor& t) const override;
  std::optional<TransferCounts> transfers() const override;
  /// One line per distinct (unit, kernel) planned, in planning order, then
  /// one per recorded choice ("choice: LABEL SHAPES MODE -> KERNEL").
  std::vector<std::string> describe_kernels() const override;
  /// How this backend's kernel selections were made since build(): timed
  /// here, replayed from kernel_choices, or reused from another backend's
  /// timing in this process.
  ChoiceCounts selections() const;

 protected:
  NodeSupport supports(const Graph& g, const Node& node) const override;
  Result<std::unique_ptr<CompiledBlock>> compile(const Graph& block) override;
  Result<void> do_build(const Graph& graph) override;
  Result<std::vector<DeviceTensor>> do_infer_on_device(const std::vector<DeviceTensor>& inputs,
                                                       const DeviceCall& call) const override;

 private:
  std::shared_ptr<Stats> stats_ = std::make_shared<Stats>();
  std::shared_ptr<StreamPool> streams_;
  BuildSettings settings_;
  std::shared_ptr<KernelChoices> choices_;
  mutable std::atomic<bool> staged_logged_{false};

  // device_io.cpp
  Result<void> check_device_inputs(const Driver& d, const std::vector<DeviceTensor>& inputs,
                                   const DeviceCall& call) const;
  Result<std::vector<DeviceTensor>> staged_on_device(const Driver& d,
                                                     const std::vector<DeviceTensor>& inputs,
                                                     const DeviceCall& call,
                                                     const std::string& why) const;
};

/// The per-node answer behind CudaBackend::supports().
NodeSupport supports_node(const Graph& g, const Node& node);

}  // namespace hone::cuda
