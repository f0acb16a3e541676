// The op schema's attributes: one plain struct per ONNX op (or family of ops
// that share attributes), each read from a Node once, with ONNX's defaults
// and validity rules written here and nowhere else. Backends, passes, aot
// and the interpreter read these structs instead of the node's attributes.
//
//   HONE_TRY(ops::GemmAttrs a, ops::gemm_attrs(node));
//   if (a.trans_b) ...;                       // default false, as ONNX says
//   HONE_TRY(auto perm, ops::transpose_perm(node, rank));  // default and check
//
// Errors are invalid-argument and name the node and the attribute. Parsing
// lives in attrs_nn.cpp (dense, conv, pool, norm, recurrent, resize) and
// attrs_tensor.cpp (axes, layout, reduce, cast, pad, clip, gelu).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hone/error.h"
#include "hone/graph.h"

namespace hone::ops {

// --- dense ------------------------------------------------------------------

struct GemmAttrs {
  float alpha = 1.0f, beta = 1.0f;
  bool trans_a = false, trans_b = false;
};
[[nodiscard]] Result<GemmAttrs> gemm_attrs(const Node& n);

// --- convolution and pooling ------------------------------------------------

enum class AutoPad { kNotSet, kSameUpper, kSameLower, kValid };

/// Conv, ConvTranspose, ConvInteger, QLinearConv, DeformConv. The window
/// itself (pads resolved against input dims) is `ops::make_window`.
struct ConvAttrs {
  int64_t group = 1;                                  ///< >= 1
  std::vector<int64_t> kernel_shape;                  ///< empty: taken from the weights
  std::vector<int64_t> strides;                       ///< empty: 1 per spatial dim
  std::vector<int64_t> dilations;                     ///< empty: 1 per spatial dim
  std::vector<int64_t> pads;                          ///< empty: 0; else begin..., end...
  std::vector<int64_t> output_padding, output_shape;  ///< ConvTranspose
  AutoPad auto_pad = AutoPad::kNotSet;
};
[[nodiscard]] Result<ConvAttrs> conv_attrs(const Node& n);
/// auto_pad alone (default NOTSET), for the window (ops/window.h).
[[nodiscard]] Result<AutoPad> auto_pad_attr(const Node& n);
/// conv_attrs(n)'s group, 1 when the attributes are invalid: for code past
/// the check of conv_attrs (kernel choice, emitters).
[[nodiscard]] int64_t conv_group(const Node& n);

/// MaxPool, AveragePool, LpPool, GlobalLpPool (p). The window attributes
/// (strides, pads, ...) are ConvAttrs'.
struct PoolAttrs {
  std::vector<int64_t> kernel_shape;  ///< positive; required by all but the Global forms
  bool ceil_mode = false;
  bool count_include_pad = false;  ///< AveragePool
  int64_t storage_order = 0;       ///< MaxPool's indices: 0 row major, 1 column major
  int64_t p = 2;                   ///< LpPool
};
[[nodiscard]] Result<PoolAttrs> pool_attrs(const Node& n);

// --- normalisation ----------------------------------------------------------

struct BatchNormAttrs {
  float epsilon = 1e-5f, momentum = 0.9f;
  bool training_mode = false;
  bool spatial = true;  ///< opset < 9 only
};
[[nodiscard]] Result<BatchNormAttrs> batch_norm_attrs(const Node& n);

/// LayerNormalization, RMSNormalization, InstanceNormalization,
/// GroupNormalization, LpNormalization, MeanVarianceNormalization.
struct NormAttrs {
  float epsilon = 1e-5f;
  int64_t axis = -1;                      ///< Layer/RMS/Lp
  int64_t stash_type = 1;                 ///< Layer/RMS: an ONNX dtype code
  int64_t num_groups = 0;                 ///< GroupNormalization
  int64_t p = 2;                          ///< LpNormalization: 1 or 2
  std::vector<int64_t> axes = {0, 2, 3};  ///< MeanVarianceNormalization
};
[[nodiscard]] Result<NormAttrs> norm_attrs(const Node& n);

struct LrnAttrs {
  int64_t size = 0;  ///< required, positive
  float alpha = 1e-4f, beta = 0.75f, bias = 1.0f;
};
[[nodiscard]] Result<LrnAttrs> lrn_attrs(const Node& n);

/// Softmax, LogSoftmax, Hardmax. Before opset 13 the input is coerced to 2-D
/// at `axis` (default 1); from 13 on `axis` is the one reduced axis (default -1).
struct SoftmaxAttrs {
  int64_t axis = -1;
  bool coerce_2d = false;
};
[[nodiscard]] Result<SoftmaxAttrs> softmax_attrs(const Node& n, int64_t opset);

// --- recurrent --------------------------------------------------------------

enum class RnnDirection { kForward, kReverse, kBidirectional };

/// RNN, GRU, LSTM.
struct RnnAttrs {
  RnnDirection direction = RnnDirection::kForward;
  std::optional<int64_t> hidden_size;  ///< positive when given
  int64_t layout = 0;                  ///< 0 or 1 (batch first)
  std::optional<float> clip;           ///< positive when given
  bool input_forget = false;           ///< LSTM
  bool linear_before_reset = false;    ///< GRU
  std::vector<std::string> activations;
  std::vector<float> activation_alpha, activation_beta;
  int64_t directions() const { return direction == RnnDirection::kBidirectional ? 2 : 1; }
};
[[nodiscard]] Result<RnnAttrs> rnn_attrs(const Node& n);

// --- resize -----------------------------------------------------------------

/// Resize (and Upsample's mode).
struct ResizeAttrs {
  std::string mode = "nearest";
  std::string coordinate_transformation_mode;  ///< "asymmetric" before opset 11, else "half_pixel"
  std::string nearest_mode = "round_prefer_floor";
  float cubic_coeff_a = -0.75f;
  bool exclude_outside = false;
  float extrapolation_value = 0.0f;
  bool antialias = false;
  std::string keep_aspect_ratio_policy = "stretch";
  std::vector<int64_t> axes;
};
[[nodiscard]] Result<ResizeAttrs> resize_attrs(const Node& n, int64_t opset);

// --- tensor layout and indexing ---------------------------------------------

/// The `axis` attribute of an op, with that op's default (Concat, Gather,
/// GatherElements, Flatten, Split, ArgMax/ArgMin, OneHot, Compress,
/// QuantizeLinear, ...). Not normalised: the rank is the caller's.
[[nodiscard]] int64_t axis_attr(const Node& n);

/// Transpose's permutation for an input of `rank` (default: reversed axes),
/// negative entries normalised; an error unless it is a permutation.
[[nodiscard]] Result<std::vector<int64_t>> transpose_perm(const Node& n, int64_t rank);

/// ScatterElements' and ScatterND's `reduction` (opsets 16 and 18): "none"
/// (the default), "add", "mul", "max" or "min"; an invalid-argument error
/// naming the op and the value otherwise.
[[nodiscard]] Result<std::string> scatter_reduction(const Node& n);

/// Reshape's allowzero (opset 14).
[[nodiscard]] bool reshape_allowzero(const Node& n);

/// Shape's start and end (opset 15), clamped into [0, rank].
struct ShapeRange {
  int64_t start = 0, end = 0;
};
[[nodiscard]] ShapeRange shape_range(const Node& n, int64_t rank);

/// ReduceSum, ReduceMean, ... and ArgMax/ArgMin (keepdims, select_last_index).
struct ReduceAttrs {
  std::vector<int64_t> axes;  ///< attribute form (before opset 13/18); else input 1
  bool keepdims = true;
  bool noop_with_empty_axes = false;
  bool select_last_index = false;
};
[[nodiscard]] Result<ReduceAttrs> reduce_attrs(const Node& n);
/// keepdims (default 1) of the reductions, ArgMax/ArgMin and SplitToSequence.
[[nodiscard]] bool keepdims_attr(const Node& n);

/// TopK's `largest` and `sorted` (default 1 each); its axis is axis_attr's.
struct TopKAttrs {
  bool largest = true;
  bool sorted = true;
};
[[nodiscard]] TopKAttrs topk_attrs(const Node& n);

/// DepthToSpace's and SpaceToDepth's `blocksize` (required, positive) and
/// DepthToSpace's `mode`: DCR (the default) or CRD.
struct DepthSpaceAttrs {
  int64_t blocksize = 0;
  bool crd = false;
};
[[nodiscard]] Result<DepthSpaceAttrs> depth_space_attrs(const Node& n);

/// Einsum's `equation` (required, not empty).
[[nodiscard]] Result<std::string> einsum_equation(const Node& n);

/// Cast's and CastLike's target: the ONNX dtype code of `to`.
[[nodiscard]] int64_t cast_to(const Node& n);

/// Pad: mode, and before opset 11 the pads and fill value as attributes.
struct PadAttrs {
  std::string mode = "constant";  ///< constant, reflect, edge, wrap
  std::vector<int64_t> pads;      ///< opset < 11 (also spelled "paddings" in opset 1)
  float value = 0.0f;             ///< opset < 11
};
[[nodiscard]] Result<PadAttrs> pad_attrs(const Node& n);

/// Clip's bounds as attributes (before opset 11; from 11 they are inputs).
struct ClipAttrs {
  float min, max;  ///< the float range (lowest, max) when absent, as ONNX says
};
[[nodiscard]] ClipAttrs clip_attrs(const Node& n);

/// Gelu (opset 20): the erf form or the tanh approximation.
enum class GeluApprox { kNone, kTanh };
[[nodiscard]] Result<GeluApprox> gelu_approx(const Node& n);
/// Gelu's tanh approximation, 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))),
/// in double: the reference's and blas's approximate="tanh", and the form
/// cuBLASLt's GELU epilogue computes.
double gelu_tanh(double x);

/// Attention (opset 23): the head counts of the 3-D form.
struct AttentionHeads {
  int64_t q_num_heads = 0, kv_num_heads = 0;  ///< 0: not given (4-D form)
};
[[nodiscard]] AttentionHeads attention_heads(const Node& n);

/// "while reading attribute 'key' of node 'name' (Op)": the context of every
/// error above, for parsers of op families elsewhere in src/ops.
[[nodiscard]] Error attr_error(const Node& n, const char* key, const std::string& what);

}  // namespace hone::ops
