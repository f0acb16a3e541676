// Private to the cuda backend: the CUDA C++ source of its kernels
// (src/backends/cuda/kernels/*.cu), embedded at build time by
// cmake/embed_text.cmake and compiled by NVRTC at run time, so hone reads no
// file to run a kernel. kernels.cpp and attention_kernels.cpp own the modules.
#pragma once

#include <string_view>

namespace hone::cuda::kernel_text {

extern const std::string_view kPrelude;  // prelude.cu: HoneEw, HoneShape, hone_ld, math helpers
extern const std::string_view
    kFixed;  // fixed.cu: im2col, copies, pools, reductions, softmax, norms
extern const std::string_view kTensorOps;  // tensor_ops.cu: ArgMax/ArgMin, norms, Resize, bool ops
extern const std::string_view kIndexOps;   // index_ops.cu: CumSum, OneHot, *Elements, Pad modes
extern const std::string_view kGridSampleTaps;  // src/ops/grid_sample_taps.h (C, shared)
extern const std::string_view kRoiAlignPoints;  // src/ops/roi_align_points.h (C, shared)
extern const std::string_view kSampleOps;       // sample_ops.cu: GridSample, RoiAlign
extern const std::string_view kHalfOps;         // half_ops.cu: kernels over bf16/f16 activations
extern const std::string_view kFp8Ops;          // fp8_ops.cu: e4m3 quantization (precision=fp8)
extern const std::string_view kNmsSelect;       // src/ops/nms_select.h (C, shared)
extern const std::string_view kNms;             // nms.cu: NonMaxSuppression
extern const std::string_view
    kAttention;  // attention.cu: the fused attention kernels' templates and helpers
extern const std::string_view
    kAttentionEntry;  // attention_entry.cu: the attention module's kernels (after kAttention)
extern const std::string_view
    kAttentionAsync;  // attention_async.cu: cp.async _hio kernels (after kAttention)

}  // namespace hone::cuda::kernel_text
