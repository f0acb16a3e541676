#include "ops/window.h"

#include <algorithm>

#include "ops/attrs.h"

namespace hone::ops {

std::string list_to_string(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

Result<std::vector<int64_t>> per_dim_attr(const Node& node, const char* key, size_t rank,
                                          int64_t fallback, const std::string& op) {
  std::vector<int64_t> v = node.attr_ints(key);
  if (v.empty()) return std::vector<int64_t>(rank, fallback);
  if (v.size() != rank)
    return fail(ErrorCode::kInvalidArgument, op + " attribute '" + key + "' " + list_to_string(v) +
                                                 " has " + std::to_string(v.size()) +
                                                 " values, expected " + std::to_string(rank) +
                                                 " (one per spatial dim)");
  return v;
}

namespace {

int64_t div_floor(int64_t a, int64_t b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}
int64_t div_ceil(int64_t a, int64_t b) {
  return -div_floor(-a, b);
}

}  // namespace

Result<Window> make_window(const Node& node, const std::vector<int64_t>& in,
                           const std::vector<int64_t>& kernel, bool ceil_mode,
                           const std::string& op) {
  const size_t r = in.size();
  Window w;
  w.in = in;
  w.kernel = kernel;
  if (kernel.size() != r)
    return fail(ErrorCode::kInvalidArgument, op + " kernel_shape " + list_to_string(kernel) +
                                                 " does not match the " + std::to_string(r) +
                                                 " spatial dims of the input");
  HONE_TRY(w.strides, per_dim_attr(node, "strides", r, 1, op));
  HONE_TRY(w.dilations, per_dim_attr(node, "dilations", r, 1, op));
  for (size_t d = 0; d < r; ++d) {
    if (kernel[d] <= 0)
      return fail(ErrorCode::kInvalidArgument,
                  op + " kernel_shape " + list_to_string(kernel) + " must be positive");
    if (w.strides[d] <= 0)
      return fail(ErrorCode::kInvalidArgument,
                  op + " strides " + list_to_string(w.strides) + " must be positive");
    if (w.dilations[d] <= 0)
      return fail(ErrorCode::kInvalidArgument,
                  op + " dilations " + list_to_string(w.dilations) + " must be positive");
  }
  HONE_TRY(const AutoPad auto_pad, auto_pad_attr(node));
  w.pad_begin.assign(r, 0);
  w.pad_end.assign(r, 0);
  w.out.assign(r, 0);
  if (auto_pad == AutoPad::kSameUpper || auto_pad == AutoPad::kSameLower) {
    for (size_t d = 0; d < r; ++d) {
      const int64_t out = div_ceil(in[d], w.strides[d]);
      const int64_t total = std::max<int64_t>(0, (out - 1) * w.strides[d] + w.dilated(d) - in[d]);
      const int64_t small = total / 2, big = total - total / 2;
      w.pad_begin[d] = auto_pad == AutoPad::kSameUpper ? small : big;
      w.pad_end[d] = auto_pad == AutoPad::kSameUpper ? big : small;
      w.out[d] = out;
    }
    return w;
  }
  if (auto_pad == AutoPad::kNotSet) {
    std::vector<int64_t> pads = node.attr_ints("pads");
    if (!pads.empty()) {
      if (pads.size() != 2 * r)
        return fail(ErrorCode::kInvalidArgument, op + " attribute 'pads' " + list_to_string(pads) +
                                                     " has " + std::to_string(pads.size()) +
                                                     " values, expected " + std::to_string(2 * r));
      for (size_t d = 0; d < r; ++d) {
        w.pad_begin[d] = pads[d];
        w.pad_end[d] = pads[d + r];
        if (pads[d] < 0 || pads[d + r] < 0)
          return fail(ErrorCode::kInvalidArgument,
                      op + " pads " + list_to_string(pads) + " must be non-negative");
      }
    }
  }
  for (size_t d = 0; d < r; ++d) {
    const int64_t padded = in[d] + w.pad_begin[d] + w.pad_end[d];
    const int64_t span = padded - w.dilated(d);
    if (span < 0)
      return fail(ErrorCode::kInvalidArgument,
                  op + ": the window (dilated kernel " + std::to_string(w.dilated(d)) +
                      ") is larger than the padded input (" + std::to_string(padded) +
                      ") along spatial dim " + std::to_string(d));
    int64_t out = (ceil_mode ? div_ceil(span, w.strides[d]) : span / w.strides[d]) + 1;
    // A window may not start in the end padding (ceil_mode only).
    if (ceil_mode && (out - 1) * w.strides[d] >= in[d] + w.pad_begin[d]) --out;
    w.out[d] = out;
  }
  return w;
}

Result<Window> make_transpose_window(const Node& node, const std::vector<int64_t>& in,
                                     const std::vector<int64_t>& kernel) {
  const std::string op = "ConvTranspose";
  HONE_TRY(const ConvAttrs ca, conv_attrs(node));
  const size_t r = in.size();
  if (kernel.size() != r)
    return fail(ErrorCode::kInvalidArgument, op + " kernel " + list_to_string(kernel) +
                                                 " does not match the input's spatial dims " +
                                                 list_to_string(in));
  Window win;
  win.in = in;
  win.kernel = kernel;
  HONE_TRY(win.strides, per_dim_attr(node, "strides", r, 1, op));
  HONE_TRY(win.dilations, per_dim_attr(node, "dilations", r, 1, op));
  for (size_t d = 0; d < r; ++d)
    if (win.strides[d] <= 0 || win.dilations[d] <= 0 || kernel[d] <= 0)
      return fail(ErrorCode::kInvalidArgument, op + " strides " + list_to_string(win.strides) +
                                                   ", dilations " + list_to_string(win.dilations) +
                                                   " and kernel " + list_to_string(kernel) +
                                                   " must be positive");
  win.pad_begin.assign(r, 0);
  win.pad_end.assign(r, 0);
  win.out.assign(r, 0);
  std::vector<int64_t> out_pad = ca.output_padding;
  if (out_pad.empty()) out_pad.assign(r, 0);
  if (out_pad.size() != r)
    return fail(ErrorCode::kInvalidArgument, op + " output_padding " + list_to_string(out_pad) +
                                                 " must have one value per spatial dim");
  std::vector<int64_t> out_shape = ca.output_shape;
  if (out_shape.size() == r + 2) out_shape.erase(out_shape.begin(), out_shape.begin() + 2);
  if (!out_shape.empty() && out_shape.size() != r)
    return fail(ErrorCode::kInvalidArgument, op + " output_shape " + list_to_string(out_shape) +
                                                 " must have one value per spatial dim");
  const AutoPad auto_pad = ca.auto_pad;
  std::vector<int64_t> pads = ca.pads;
  if (!pads.empty() && pads.size() != 2 * r)
    return fail(ErrorCode::kInvalidArgument, op + " pads " + list_to_string(pads) + " must have " +
                                                 std::to_string(2 * r) + " values");
  const bool same = auto_pad == AutoPad::kSameUpper || auto_pad == AutoPad::kSameLower;
  for (size_t d = 0; d < r; ++d) {
    const int64_t full = win.strides[d] * (in[d] - 1) + out_pad[d] + win.dilated(d);
    if (!out_shape.empty() || same) {
      const int64_t target = out_shape.empty() ? in[d] * win.strides[d] : out_shape[d];
      const int64_t total = std::max<int64_t>(0, full - target);
      if (auto_pad == AutoPad::kSameUpper) {
        win.pad_begin[d] = total / 2;
        win.pad_end[d] = total - total / 2;
      } else {
        win.pad_begin[d] = total - total / 2;
        win.pad_end[d] = total / 2;
      }
      win.out[d] = target;
    } else {
      if (!pads.empty() && auto_pad == AutoPad::kNotSet) {
        win.pad_begin[d] = pads[d];
        win.pad_end[d] = pads[d + r];
      }
      win.out[d] = full - win.pad_begin[d] - win.pad_end[d];
    }
    if (win.out[d] < 0)
      return fail(ErrorCode::kInvalidArgument, op + " output spatial dim " + std::to_string(d) +
                                                   " would be " + std::to_string(win.out[d]) +
                                                   " (pads larger than the full output)");
  }
  return win;
}

}  // namespace hone::ops
