// Sliding-window geometry of convolutions and pools, written once: reads
// kernel, strides, dilations, pads, auto_pad and ceil_mode the ONNX way and
// gives each spatial dim's padding and output size. Every backend and the
// passes take their windows from here.
//
//   HONE_TRY(ops::Window w, ops::make_window(node, {224, 224}, {7, 7}, false, "Conv"));
//   int64_t oh = w.out[0], pad_top = w.pad_begin[0];
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hone/error.h"
#include "hone/graph.h"

namespace hone::ops {

/// Geometry of a sliding window over the spatial dims of an [N, C, D1..Dn]
/// tensor: one entry per spatial dim.
struct Window {
  std::vector<int64_t> in;      // input spatial dims
  std::vector<int64_t> kernel;  // kernel extent (undilated)
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> pad_begin;
  std::vector<int64_t> pad_end;
  std::vector<int64_t> out;  // output spatial dims

  size_t rank() const { return in.size(); }
  int64_t dilated(size_t d) const { return (kernel[d] - 1) * dilations[d] + 1; }
};

/// Reads strides, dilations, pads and auto_pad from `node` and computes the
/// output dims of a window of `kernel` over `in`. `ceil_mode` is for pools;
/// `op` names the op in errors (invalid argument: bad attribute values, or a
/// window larger than the padded input).
[[nodiscard]] Result<Window> make_window(const Node& node, const std::vector<int64_t>& in,
                                         const std::vector<int64_t>& kernel, bool ceil_mode,
                                         const std::string& op);

/// ConvTranspose's window over input spatial dims `in` with kernel `kernel`:
/// strides, dilations, pads, auto_pad (SAME splits the padding of an output
/// of in * stride), output_padding and output_shape read from `node`; `out`
/// is the output's spatial dims, an input row ih landing on output row
/// ih * stride + k * dilation - pad_begin. Invalid argument: attribute
/// lengths or values that do not fit, pads larger than the full output.
[[nodiscard]] Result<Window> make_transpose_window(const Node& node, const std::vector<int64_t>& in,
                                                   const std::vector<int64_t>& kernel);

/// A per-spatial-dim attribute (strides, dilations): `fallback` for each dim
/// when absent; an error naming the attribute when its length is not `rank`.
[[nodiscard]] Result<std::vector<int64_t>> per_dim_attr(const Node& node, const char* key,
                                                        size_t rank, int64_t fallback,
                                                        const std::string& op);

/// "[a,b,c]" for error messages.
std::string list_to_string(const std::vector<int64_t>& v);

}  // namespace hone::ops
