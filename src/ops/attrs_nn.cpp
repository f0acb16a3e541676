// Attribute parsing of the dense, convolution, pooling, normalisation,
// recurrent and resize ops (ops/attrs.h): ONNX's defaults and validity rules.
#include "ops/attrs.h"

#include "ops/window.h"

namespace hone::ops {

Error attr_error(const Node& n, const char* key, const std::string& what) {
  return Error(ErrorCode::kInvalidArgument,
               n.op_type + " attribute '" + key + "' " + what + " (node " + n.describe() + ")");
}

namespace {

/// Int-list attribute `key` of `n` (empty when absent), every entry positive.
Result<std::vector<int64_t>> checked_ints(const Node& n, const char* key) {
  std::vector<int64_t> v = n.attr_ints(key);
  for (int64_t x : v)
    if (x <= 0) return fail(attr_error(n, key, list_to_string(v) + " must be positive"));
  return v;
}

}  // namespace

Result<GemmAttrs> gemm_attrs(const Node& n) {
  GemmAttrs a;
  a.alpha = n.attr_float("alpha", 1.0f);
  a.beta = n.attr_float("beta", 1.0f);
  a.trans_a = n.attr_int("transA", 0) != 0;
  a.trans_b = n.attr_int("transB", 0) != 0;
  return a;
}

Result<ConvAttrs> conv_attrs(const Node& n) {
  ConvAttrs a;
  a.group = n.attr_int("group", 1);
  if (a.group < 1)
    return fail(attr_error(n, "group", std::to_string(a.group) + " must be at least 1"));
  HONE_TRY(a.kernel_shape, checked_ints(n, "kernel_shape"));
  HONE_TRY(a.strides, checked_ints(n, "strides"));
  HONE_TRY(a.dilations, checked_ints(n, "dilations"));
  a.pads = n.attr_ints("pads");
  a.output_padding = n.attr_ints("output_padding");
  a.output_shape = n.attr_ints("output_shape");
  if (a.pads.size() % 2 != 0)
    return fail(attr_error(n, "pads", list_to_string(a.pads) + " must have an even length"));
  for (int64_t p : a.pads)
    if (p < 0) return fail(attr_error(n, "pads", list_to_string(a.pads) + " must be non-negative"));
  HONE_TRY(a.auto_pad, auto_pad_attr(n));
  return a;
}

Result<AutoPad> auto_pad_attr(const Node& n) {
  const std::string ap = n.attr_string("auto_pad", "NOTSET");
  if (ap == "NOTSET" || ap.empty()) return AutoPad::kNotSet;
  if (ap == "SAME_UPPER") return AutoPad::kSameUpper;
  if (ap == "SAME_LOWER") return AutoPad::kSameLower;
  if (ap == "VALID") return AutoPad::kValid;
  return fail(attr_error(n, "auto_pad",
                         "'" + ap + "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID"));
}

int64_t conv_group(const Node& n) {
  return conv_attrs(n).value_or(ConvAttrs{}).group;
}

Result<PoolAttrs> pool_attrs(const Node& n) {
  PoolAttrs a;
  HONE_TRY(a.kernel_shape, checked_ints(n, "kernel_shape"));
  a.ceil_mode = n.attr_int("ceil_mode", 0) != 0;
  a.count_include_pad = n.attr_int("count_include_pad", 0) != 0;
  a.storage_order = n.attr_int("storage_order", 0);
  if (a.storage_order != 0 && a.storage_order != 1)
    return fail(
        attr_error(n, "storage_order", std::to_string(a.storage_order) + " must be 0 or 1"));
  a.p = n.attr_int("p", 2);
  return a;
}

Result<BatchNormAttrs> batch_norm_attrs(const Node& n) {
  BatchNormAttrs a;
  a.epsilon = n.attr_float("epsilon", 1e-5f);
  a.momentum = n.attr_float("momentum", 0.9f);
  a.training_mode = n.attr_int("training_mode", 0) != 0;
  a.spatial = n.attr_int("spatial", 1) != 0;
  return a;
}

Result<NormAttrs> norm_attrs(const Node& n) {
  NormAttrs a;
  a.epsilon = n.attr_float("epsilon", 1e-5f);
  a.axis = axis_attr(n);  // -1 for Layer/RMS/LpNormalization
  a.stash_type = n.attr_int("stash_type", 1);
  a.num_groups = n.attr_int("num_groups", 0);
  a.p = n.attr_int("p", 2);
  a.axes = n.attr_ints("axes", {0, 2, 3});
  return a;
}

Result<LrnAttrs> lrn_attrs(const Node& n) {
  LrnAttrs a;
  a.size = n.attr_int("size", 0);
  if (a.size <= 0) return fail(attr_error(n, "size", std::to_string(a.size) + " must be positive"));
  a.alpha = n.attr_float("alpha", 1e-4f);
  a.beta = n.attr_float("beta", 0.75f);
  a.bias = n.attr_float("bias", 1.0f);
  return a;
}

Result<SoftmaxAttrs> softmax_attrs(const Node& n, int64_t opset) {
  SoftmaxAttrs a;
  a.coerce_2d = opset < 13;
  a.axis = n.attr_int("axis", a.coerce_2d ? 1 : -1);
  return a;
}

Result<RnnAttrs> rnn_attrs(const Node& n) {
  RnnAttrs a;
  const std::string dir = n.attr_string("direction", "forward");
  if (dir == "forward")
    a.direction = RnnDirection::kForward;
  else if (dir == "reverse")
    a.direction = RnnDirection::kReverse;
  else if (dir == "bidirectional")
    a.direction = RnnDirection::kBidirectional;
  else
    return fail(
        attr_error(n, "direction", "must be forward, reverse or bidirectional, got '" + dir + "'"));
  if (n.has_attr("hidden_size")) {
    a.hidden_size = n.attr_int("hidden_size", 0);
    if (*a.hidden_size <= 0)
      return fail(
          attr_error(n, "hidden_size", "must be positive, got " + std::to_string(*a.hidden_size)));
  }
  a.layout = n.attr_int("layout", 0);
  if (a.layout != 0 && a.layout != 1)
    return fail(attr_error(n, "layout", "must be 0 or 1, got " + std::to_string(a.layout)));
  if (n.has_attr("clip")) {
    a.clip = n.attr_float("clip", 0.0f);
    if (!(*a.clip > 0.0f))
      return fail(attr_error(n, "clip", "must be positive, got " + std::to_string(*a.clip)));
  }
  a.input_forget = n.attr_int("input_forget", 0) != 0;
  a.linear_before_reset = n.attr_int("linear_before_reset", 0) != 0;
  a.activations = n.attr_strings("activations");
  a.activation_alpha = n.attr_floats("activation_alpha");
  a.activation_beta = n.attr_floats("activation_beta");
  return a;
}

Result<ResizeAttrs> resize_attrs(const Node& n, int64_t opset) {
  ResizeAttrs a;
  a.mode = n.attr_string("mode", "nearest");
  a.coordinate_transformation_mode =
      n.attr_string("coordinate_transformation_mode", opset < 11 ? "asymmetric" : "half_pixel");
  a.nearest_mode = n.attr_string("nearest_mode", "round_prefer_floor");
  a.cubic_coeff_a = n.attr_float("cubic_coeff_a", -0.75f);
  a.exclude_outside = n.attr_int("exclude_outside", 0) != 0;
  a.extrapolation_value = n.attr_float("extrapolation_value", 0.0f);
  a.antialias = n.attr_int("antialias", 0) != 0;
  a.keep_aspect_ratio_policy = n.attr_string("keep_aspect_ratio_policy", "stretch");
  a.axes = n.attr_ints("axes");
  return a;
}

AttentionHeads attention_heads(const Node& n) {
  return {n.attr_int("q_num_heads", 0), n.attr_int("kv_num_heads", 0)};
}

}  // namespace hone::ops
