#include "backends/cuda/kernels.h"

#include <memory>
#include <mutex>

#include "backends/cuda/kernel_text.h"

namespace hone::cuda {

// The kernels (kernels/prelude.cu, kernels/fixed.cu, kernels/tensor_ops.cu, kernels/index_ops.cu,
// kernels/half_ops.cu,
// kernels/fp8_ops.cu, kernels/sample_ops.cu with src/ops/grid_sample_taps.h and roi_align_points.h,
// kernels/nms.cu with src/ops/nms_select.h)
// run in f32 with IEEE division and libdevice's accurate functions (no --use_fast_math): results
// must match the reference interpreter.

const std::string& ew_prelude() {
  static const std::string s{kernel_text::kPrelude};
  return s;
}

Result<const Module*> fixed_module(const Driver& d) {
  // Compiled once: NVRTC takes a fraction of a second, and every block of
  // every backend object in the process shares these kernels.
  static std::mutex mu;
  static std::unique_ptr<Module> module;
  std::lock_guard lock(mu);
  if (!module) {
    HONE_TRY(
        Module m,
        Module::compile(
            d,
            ew_prelude() + std::string(kernel_text::kFixed) + std::string(kernel_text::kTensorOps) +
                std::string(kernel_text::kIndexOps) + std::string(kernel_text::kGridSampleTaps) +
                std::string(kernel_text::kRoiAlignPoints) + std::string(kernel_text::kSampleOps) +
                std::string(kernel_text::kHalfOps) + std::string(kernel_text::kFp8Ops) +
                std::string(kernel_text::kNmsSelect) + std::string(kernel_text::kNms),
            "hone_fixed"));
    module = std::make_unique<Module>(std::move(m));
  }
  return module.get();
}

}  // namespace hone::cuda
