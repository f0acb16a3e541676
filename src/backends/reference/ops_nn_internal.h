// Private to the nn kernel family (ops_nn*.cpp): the per-part registration
// functions and the window geometry that Conv, ConvTranspose and the pools
// share (strides, dilations, pads, auto_pad, ceil_mode).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/reference/kernel.h"

namespace hone::reference::nn {

void register_conv_ops(OpRegistry& r);    // Conv, ConvTranspose, ConvInteger, QLinearConv
void register_pool_ops(OpRegistry& r);    // MaxPool, AveragePool, LpPool, Global*, MaxUnpool
void register_norm_ops(OpRegistry& r);    // BatchNormalization, Instance/Layer/GroupNorm, LRN, MVN
void register_resize_ops(OpRegistry& r);  // Resize, Upsample
void register_vision_ops(OpRegistry& r);  // RoiAlign, GridSample, NonMaxSuppression

/// Geometry of a sliding window over the spatial dims of an [N, C, D1..Dn]
/// tensor: one entry per spatial dim.
struct Window {
  std::vector<int64_t> in;         // input spatial dims
  std::vector<int64_t> kernel;     // kernel extent (undilated)
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> pad_begin;
  std::vector<int64_t> pad_end;
  std::vector<int64_t> out;        // output spatial dims

  size_t rank() const { return in.size(); }
  int64_t dilated(size_t d) const { return (kernel[d] - 1) * dilations[d] + 1; }
};

/// Reads strides, dilations, pads and auto_pad from `node` and computes the
/// output dims of a window of `kernel` over `in`. `ceil_mode` is for pools;
/// `op` names the op in errors.
[[nodiscard]] Result<Window> make_window(const Node& node, const std::vector<int64_t>& in,
                                         const std::vector<int64_t>& kernel, bool ceil_mode,
                                         const std::string& op);

/// Product of dims (1 for none).
inline int64_t product(const std::vector<int64_t>& v, size_t from = 0) {
  int64_t p = 1;
  for (size_t i = from; i < v.size(); ++i) p *= v[i];
  return p;
}

/// "[1,2,3]".
std::string list_to_string(const std::vector<int64_t>& v);

/// Checks an [N, C, spatial...] input of at least `min_rank` dims.
[[nodiscard]] Result<void> check_nc_input(const Tensor& x, size_t min_rank, const std::string& op);

}  // namespace hone::reference::nn
