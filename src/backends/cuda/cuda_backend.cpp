#include "backends/cuda/cuda_backend.h"

#include <algorithm>
#include <cstring>

#include "backends/common/capabilities.h"
#include "backends/common/static_dims.h"
#include "backends/cuda/activations_choice.h"
#include "backends/cuda/cuda_api.h"
#include "backends/cuda/cuda_block.h"
#include "backends/cuda/cudnn_api.h"
#include "backends/cuda/fp8.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/op.h"
#include "core/log.h"
#include "hone/registry.h"

namespace hone::cuda {

CudaBackend::CudaBackend() {
  // A lone Conv or MatMul is worth a block; the base's default of 5 would
  // send single-node models (conformance tests) to the fallback.
  mutable_config()
      .declare("min_block_size", int64_t{1}, "supported islands with fewer nodes fall back")
      .declare("precision", std::string("fp32"),
               "fp32: strict f32 matrix products (TF32 off); tf32: cuBLAS and cuDNN on TF32 "
               "tensor cores; bf16 / fp16: matrix "
               "products on bf16 / f16 tensor cores, convolutions on TF32 ones or (timed per "
               "geometry, conv_select) on cuDNN's bf16 / f16 NHWC kernels; every product "
               "accumulates in f32, and tensors, softmax and normalisation stay f32 (but for the "
               "hidden activation inside a bf16/fp16 MLP unit, see gemm_epilogue); fp8 (compute "
               "capability 8.9 or newer): as bf16 with activations=half, but matrix products by "
               "a constant weight (MatMul with or without a bias, a Linear Gemm, the MLP "
               "unit's) on cuBLASLt in FP8 e4m3, the weight converted once with a per-tensor "
               "scale, the activation quantized before each product with a scale from its "
               "current amax; a product whose K or N is no multiple of 16 stays bf16 (its "
               "kernel says why). Under bf16, fp16 and fp8, a unit holding a node named in "
               "fp32_nodes runs on f32 tensors and operands (TF32 products), marked [fp32] in "
               "the kernel plan")
      .declare("cudnn", true,
               "convolutions on cuDNN when it is found (HONE_CUDNN_PATH, the loader's path, "
               "PyTorch's pip wheel); false, or no cuDNN: im2col + cuBLAS")
      .declare("cudnn_depthwise", true,
               "depthwise convolutions on cuDNN too; false: hone's direct kernel")
      .declare("cudnn_fused", true,
               "a conv's bias, residual Add and Relu inside cuDNN's fused call; false: the "
               "plain cuDNN conv, then one hone epilogue pass")
      .declare("conv_select", std::string("time"),
               "time: per conv geometry, time cuDNN against im2col + cuBLAS (and, under "
               "bf16/fp16, cuDNN on bf16/f16 NHWC copies of the input and weights, checked "
               "against the f32 cuDNN result) at plan time and keep the fastest; cudnn: cuDNN "
               "(f32 data) wherever it can run the conv; cudnn_nhwc (bf16/fp16 only): cuDNN in "
               "bf16/f16 NHWC wherever it can run the conv (group 1, symmetric pads), else as "
               "cudnn")
      .declare("gemm_select", std::string("time"),
               "bf16/fp16 only. time: per matrix-product shape, time the bf16/f16 product "
               "(operands converted) against SGEMM in TF32 at plan time and keep the faster; "
               "reduced: always the bf16/f16 product")
      .declare("attention_select", std::string("time"),
               "time: per attention block and shape, time the fused kernels that accept it "
               "(f32 SIMT; tensor cores: bf16/f16 operands under those precisions, tf32 under "
               "tf32, 3xTF32 under strict fp32) against the unfused GEMM-softmax-GEMM path at "
               "plan time and keep the fastest; fused: a fused kernel whenever one accepts the "
               "shapes; unfused: the nodes' own kernels")
      .declare("gemm_epilogue", true,
               "a MatMul by a constant weight and the Add of a constant bias after it run as one "
               "unit: cuBLASLt's bias epilogue (each algorithm of its heuristic, when "
               "libcublasLt is found; f32 operands also with the weight transposed once) or "
               "the bias broadcast into the output first, whichever times faster; under "
               "bf16/fp16, MatMul + bias, an element-wise chain (GELU) and MatMul + bias run "
               "as one MLP unit whose hidden activation stays bf16/f16; false: MatMul, then "
               "the Add")
      .declare_record(
          "kernel_choices",
          "the kernels chosen by timing (conv_select, gemm_select, attention_select, "
          "gemm_epilogue), one entry per unit, input shapes and precision: "
          "LABEL|SHAPES|MODE=KERNEL, ';'-separated ('%XX' escapes % ; = |), '-' for none. "
          "Filled as shapes are planned; a build given entries replays them untimed")
      .declare("activations", std::string("auto"),
               "bf16/fp16 only (fp8: always half). f32: tensors between steps stay f32 (each "
               "product converts its "
               "operands); half: they live in bf16/f16, rank-4 ones channels-last (NHWC) from "
               "a block's first conv to its end; convs (cuDNN, 1x1 ones one cuBLAS GEMM; bias, "
               "residual and Relu fused), pools, "
               "element-wise chains, Concat, views and Gemm read them directly, and a "
               "conversion is added only where a reader has no half kernel (listed in the "
               "kernel plan with its reason); auto: each block and input shape is built both "
               "ways (half only where some value would be half), both are timed on the device "
               "and the faster is kept, recorded in kernel_choices ('block ... activations' "
               "=half or =f32) and replayed untimed from it; the kernel plan names the choice "
               "and both times")
      .declare("cuda_graphs", true,
               "replay each shape signature's launches as one CUDA graph (captured on its second "
               "run on a stream)");
}

CudaBackend::~CudaBackend() = default;

const BackendCapabilities& CudaBackend::caps() {
  // Just in time: kernels are compiled by NVRTC at build.
  static const BackendCapabilities c = [] {
    BackendCapabilities k = f32_capabilities(Device::kCuda, BuildMode::kJustInTime);
    // tf32: cuBLAS's TF32 tensor-op math mode; bf16 / f16: its f32-accumulating
    // bf16 / f16 tensor-core compute types.
    k.precisions = {Precision::kFp32, Precision::kTf32, Precision::kBf16, Precision::kFp16};
    k.mixed_precision = true;  // fp32_nodes: their units stay f32 under bf16/fp16/fp8
    // FP8 products: the device and the cuBLASLt loaded decide (fp8.h).
    k.precision_needs[Precision::kFp8] =
        "an NVIDIA GPU of compute capability 8.9 or newer (Ada, Hopper) and a cuBLASLt with FP8 "
        "matrix products (12.1 or newer on Ada)";
    auto d = Driver::get();
    const std::string why = d ? fp8_why_not(**d) : d.error().message();
    if (why.empty())
      k.precisions.push_back(Precision::kFp8);
    else
      k.precision_why_not[Precision::kFp8] = why;
    return k;
  }();
  return c;
}

std::string CudaBackend::unavailable_reason() {
  auto d = Driver::get();
  return d ? std::string() : d.error().message();
}

Result<Tensor> CudaBackend::allocate_host(DType dtype, std::vector<int64_t> shape) const {
  auto drv = Driver::get();
  if (!drv) return Tensor::allocate(dtype, std::move(shape));  // no GPU: ordinary memory
  auto t = PinnedPool::tensor(**drv, dtype, shape);
  if (!t) {
    // Page-locked memory is limited (RLIMIT_MEMLOCK in a container, say):
    // ordinary memory still works, through the staging copy.
    HONE_LOG_DEBUG("cuda: ordinary memory for an input: {}", t.error().message());
    return Tensor::allocate(dtype, std::move(shape));
  }
  if (t->nbytes() > 0) std::memset(t->raw(), 0, t->nbytes());
  return t;
}

std::vector<std::string> CudaBackend::describe_kernels() const {
  std::vector<std::string> out;
  {
    std::lock_guard lock(stats_->mu);
    out = stats_->kernel_lines;
  }
  if (choices_)
    for (std::string& l : choices_->lines()) out.push_back(std::move(l));
  return out;
}

ChoiceCounts CudaBackend::selections() const {
  return choices_ ? choices_->counts() : ChoiceCounts{};
}

NodeSupport CudaBackend::supports(const Graph& g, const Node& node) const {
  return supports_node(g, node);
}

Result<void> CudaBackend::do_build(const Graph& graph) {
  // No device, no build: fail before partitioning, with the machine's reason.
  // configure() admitted only the precisions caps() lists.
  const Precision precision = this->precision();
  const bool fp8 = precision == Precision::kFp8;
  const bool half = precision == Precision::kBf16 || precision == Precision::kFp16 || fp8;
  const std::string select = config().get<std::string>("conv_select", "time");
  if (select != "time" && select != "cudnn" && select != "cudnn_nhwc")
    return fail(ErrorCode::kInvalidArgument,
                "cuda conv_select '" + select + "': expected time, cudnn or cudnn_nhwc");
  if (select == "cudnn_nhwc" && !half)
    return fail(ErrorCode::kInvalidArgument,
                "cuda conv_select 'cudnn_nhwc' runs convs in bf16 or f16: it needs precision "
                "bf16 or fp16, not '" +
                    std::string(to_string(precision)) + "'");
  const std::string gemm_select = config().get<std::string>("gemm_select", "time");
  if (gemm_select != "time" && gemm_select != "reduced")
    return fail(ErrorCode::kInvalidArgument,
                "cuda gemm_select '" + gemm_select + "': expected time or reduced");
  const std::string attention = config().get<std::string>("attention_select", "time");
  if (attention != "time" && attention != "fused" && attention != "unfused")
    return fail(ErrorCode::kInvalidArgument,
                "cuda attention_select '" + attention + "': expected time, fused or unfused");
  auto given = KernelChoices::parse(config().get<std::string>("kernel_choices", ""));
  if (!given) return fail(std::move(given).error());
  HONE_CHECK_OK(check_activations_entries(*given));
  HONE_TRY(const ActivationsMode activations,
           parse_activations(config().get<std::string>("activations", "auto")));
  HONE_TRY(const Driver* d, Driver::get());
  if (fp8) {
    // configure() admitted fp8 only where caps() found it; a config set
    // otherwise (a package made elsewhere) meets the device's reason here.
    if (const std::string why = fp8_why_not(*d); !why.empty())
      return fail(ErrorCode::kUnsupportedHardware, "cuda precision fp8: " + why);
    if (activations == ActivationsMode::kF32)
      return fail(ErrorCode::kInvalidArgument,
                  "cuda precision fp8 keeps activations in bf16 between its products "
                  "(activations=half or auto), not activations=f32");
  }
  const bool tf32 = precision != Precision::kFp32;
  const int gemm_half = precision == Precision::kBf16 || fp8 ? kCudaR16BF
                        : precision == Precision::kFp16      ? kCudaR16F
                                                             : 0;
  const int math = tf32 ? kCublasTf32Math : kCublasDefaultMath;
  // Handles take their math mode when made, and graphs are keyed by plans of
  // the blocks being replaced: each build gets a new pool.
  streams_ = std::make_shared<StreamPool>();
  streams_->d = d;
  streams_->math_mode = math;
  streams_->graphs = config().get<bool>("cuda_graphs", true);
  settings_ = BuildSettings{};
  settings_.math.tf32 = tf32;
  settings_.math.half = gemm_half;
  settings_.gemm.by_time = gemm_select == "time";
  settings_.math.half_activations = activations != ActivationsMode::kF32 && gemm_half != 0;
  // fp8 runs as bf16 with half activations, untimed against f32 ones.
  settings_.math.activations_auto = activations == ActivationsMode::kAuto && gemm_half != 0 && !fp8;
  settings_.math.fp8 = fp8;
  settings_.math.precision = precision;
  settings_.math.mode = std::string(to_string(precision));
  if (const auto keep = fp32_nodes(); !keep.empty() && gemm_half != 0)
    settings_.fp32_nodes = std::make_shared<const std::set<std::string>>(keep.begin(), keep.end());
  // The record starts from the given choices; what is timed later (blocks
  // planned at build, or at their first inference of a new shape) is written
  // back into the config, so a package saved after the tune replays it.
  choices_ = std::make_shared<KernelChoices>(std::move(*given));
  choices_->on_change(
      [this](const std::string& text) { (void)mutable_config().set("kernel_choices", text); });
  settings_.choices = choices_;
  settings_.gemm.epilogue = config().get<bool>("gemm_epilogue", true);
  settings_.attention = attention == "fused"     ? AttentionSelect::kFused
                        : attention == "unfused" ? AttentionSelect::kUnfused
                                                 : AttentionSelect::kTime;
  settings_.conv.depthwise_on_dnn = config().get<bool>("cudnn_depthwise", true);
  settings_.conv.fused_relu = config().get<bool>("cudnn_fused", true);
  settings_.conv.select = select == "cudnn"        ? ConvSelect::kCudnn
                          : select == "cudnn_nhwc" ? ConvSelect::kCudnnNhwc
                                                   : ConvSelect::kTime;
  if (!config().get<bool>("cudnn", true)) {
    settings_.conv.why_not = "cudnn=false";
  } else if (auto dnn = Cudnn::get()) {
    settings_.conv.dnn = *dnn;
  } else {
    settings_.conv.why_not = dnn.error().message();
  }
  streams_->dnn = settings_.conv.dnn;
  if (std::any_of(graph.nodes().begin(), graph.nodes().end(),
                  [](const Node& n) { return n.op_type == "Conv"; })) {
    const std::string line =
        settings_.conv.dnn != nullptr
            ? "convolutions: " + settings_.conv.dnn->description()
            : "convolutions: im2col + cuBLAS (cuDNN not used: " + settings_.conv.why_not + ")";
    HONE_LOG_DEBUG("cuda: {}", line);
    std::lock_guard lock(stats_->mu);
    if (stats_->seen.insert(line).second) stats_->kernel_lines.push_back(line);
  }
  HONE_LOG_DEBUG("cuda: matrix products in {}",
                 precision == Precision::kFp32 ? std::string("strict fp32")
                 : fp8 ? std::string("fp8 where a constant weight's shapes allow, else bf16 (f32 "
                                     "accumulation)")
                       : settings_.math.mode + " (f32 accumulation)");
  return CompilingBackend::do_build(graph);
}

BuildSettings BuildSettings::f32_math() const {
  BuildSettings s = *this;
  s.math.half = 0;
  s.math.half_activations = false;
  s.math.activations_auto = false;
  s.math.fp8 = false;
  s.math.precision = math.tf32 ? Precision::kTf32 : Precision::kFp32;
  s.math.mode = std::string(to_string(s.math.precision));
  s.fp32_nodes = nullptr;
  return s;
}

Result<std::unique_ptr<CompiledBlock>> CudaBackend::compile(const Graph& block) {
  HONE_TRY(const Driver* d, Driver::get());
  HONE_CHECK_OK(d->make_current());
  HONE_TRY(const Module* fixed, fixed_module(*d));
  // The block's ops see the backend's record through a layer of their own,
  // so that activations=auto can try a Program's choices apart (build_auto).
  BuildSettings settings = settings_;
  if (settings.choices) settings.choices = std::make_shared<KernelChoices>(settings_.choices);
  auto compiled = std::make_unique<CudaBlock>(std::make_shared<const Graph>(block), *d, *fixed,
                                              stats_, streams_, std::move(settings));
  HONE_CHECK_OK_CTX(compiled->init(), "while compiling a cuda block of " +
                                          std::to_string(block.nodes().size()) + " nodes");
  // Dynamic blocks are planned on first use.
  if (auto sig = static_input_dims(block)) compiled->prepare(*sig);
  return compiled;
}

}  // namespace hone::cuda

namespace hone {

void register_cuda(BackendRegistry& registry) {
  BackendRegistry::Entry e{"cuda",
                           "NVIDIA GPU through the CUDA driver, cuBLAS SGEMM and NVRTC-compiled "
                           "kernels, all loaded at run time",
                           cuda::CudaBackend::caps(),
                           [] { return std::make_unique<cuda::CudaBackend>(); },
                           [] { return cuda::CudaBackend::unavailable_reason(); }};
  auto r = registry.add(std::move(e));
  (void)r;  // only fails on a duplicate name, which the one list rules out
}

}  // namespace hone
