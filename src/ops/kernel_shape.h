// A Conv's or ConvTranspose's kernel_shape attribute against its weights:
// ONNX requires them to agree, and the backends that read both refuse a node
// where they do not with this one check and message.
//
//   const std::vector<int64_t>& w = g.value(n.inputs[1]).initializer->shape();
//   if (auto k = ops::check_kernel_shape(attrs.kernel_shape, w); !k) return k.error().message();
#pragma once

#include <cstdint>
#include <vector>

#include "hone/error.h"
#include "ops/window.h"

namespace hone::ops {

/// kInvalidArgument naming both when `kernel_shape` (empty: unset, the
/// kernel is taken from the weights) is not the spatial dims of weights `w`
/// ([M, C/group, k...], or ConvTranspose's [C, M/group, k...]). A set
/// kernel_shape never agrees with weights of rank below 2.
[[nodiscard]] inline Result<void> check_kernel_shape(const std::vector<int64_t>& kernel_shape,
                                                     const std::vector<int64_t>& w) {
  if (kernel_shape.empty()) return {};
  if (w.size() >= 2 && kernel_shape == std::vector<int64_t>(w.begin() + 2, w.end())) return {};
  return fail(ErrorCode::kInvalidArgument, "kernel_shape " + list_to_string(kernel_shape) +
                                               " disagrees with the weights " + list_to_string(w));
}

}  // namespace hone::ops
