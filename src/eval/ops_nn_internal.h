// Private to the nn kernel family (ops_nn*.cpp): the per-part registration
// functions, and the window geometry (from ops/window.h) that Conv,
// ConvTranspose and the pools share.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "eval/kernel.h"
#include "ops/window.h"

namespace hone::eval::nn {

void register_conv_ops(OpRegistry& r);    // Conv, ConvTranspose, ConvInteger, QLinearConv
void register_pool_ops(OpRegistry& r);    // MaxPool, AveragePool, LpPool, Global*, MaxUnpool
void register_norm_ops(OpRegistry& r);    // BatchNormalization, Instance/Layer/GroupNorm, LRN, MVN
void register_resize_ops(OpRegistry& r);  // Resize, Upsample
void register_vision_ops(OpRegistry& r);  // RoiAlign, GridSample, NonMaxSuppression
void register_attention_ops(OpRegistry& r);  // Attention, RotaryEmbedding
void register_deform_ops(OpRegistry& r);     // Col2Im, DeformConv

// The window geometry lives once, in src/ops.
using ops::list_to_string;
using ops::make_window;
using ops::per_dim_attr;
using ops::Window;

/// Product of dims (1 for none).
inline int64_t product(const std::vector<int64_t>& v, size_t from = 0) {
  int64_t p = 1;
  for (size_t i = from; i < v.size(); ++i) p *= v[i];
  return p;
}

/// Checks an [N, C, spatial...] input of at least `min_rank` dims.
[[nodiscard]] Result<void> check_nc_input(const Tensor& x, size_t min_rank, const std::string& op);

}  // namespace hone::eval::nn
