#include "ops/signature.h"

#include <algorithm>
#include <utility>

namespace hone::ops {
namespace {

struct Row {
  std::string_view op_type;
  int since, min_inputs, max_inputs, min_outputs, max_outputs;
  /// "name:kind" words, "!" after the kind for a required attribute.
  std::string_view attributes;
};

// clang-format off
constexpr Row kRows[] = {
    // op, since, inputs min/max, outputs min/max, attributes
    {"AffineGrid", 20, 2, 2, 1, 1, "align_corners:int"},
    {"Attention", 23, 3, 6, 1, 4, "is_causal:int kv_num_heads:int q_num_heads:int "
     "qk_matmul_output_mode:int scale:float softcap:float softmax_precision:int"},
    {"Attention", 24, 3, 7, 1, 4, "is_causal:int kv_num_heads:int q_num_heads:int "
     "qk_matmul_output_mode:int scale:float softcap:float softmax_precision:int"},
    {"Attention", 25, 3, 7, 1, 4, "is_causal:int kv_num_heads:int left_window_size:int "
     "q_num_heads:int qk_matmul_output_mode:int right_window_size:int scale:float "
     "softcap:float softmax_precision:int"},
    {"AveragePool", 19, 1, 1, 1, 1, "auto_pad:string ceil_mode:int count_include_pad:int "
     "dilations:ints kernel_shape:ints! pads:ints strides:ints"},
    {"BitCast", 26, 1, 1, 1, 1, "to:int!"},
    {"BitwiseAnd", 18, 2, 2, 1, 1, ""},
    {"BitwiseNot", 18, 1, 1, 1, 1, ""},
    {"BitwiseOr", 18, 2, 2, 1, 1, ""},
    {"BitwiseXor", 18, 2, 2, 1, 1, ""},
    {"Cast", 19, 1, 1, 1, 1, "saturate:int to:int!"},
    {"Cast", 24, 1, 1, 1, 1, "round_mode:string saturate:int to:int!"},
    {"CastLike", 19, 2, 2, 1, 1, "saturate:int"},
    {"CastLike", 24, 2, 2, 1, 1, "round_mode:string saturate:int"},
    {"CenterCropPad", 18, 2, 2, 1, 1, "axes:ints"},
    {"Col2Im", 18, 3, 3, 1, 1, "dilations:ints pads:ints strides:ints"},
    {"CumProd", 26, 2, 2, 1, 1, "exclusive:int reverse:int"},
    {"DFT", 20, 1, 3, 1, 1, "inverse:int onesided:int"},
    {"DeformConv", 19, 3, 5, 1, 1, "dilations:ints group:int kernel_shape:ints offset_group:int "
     "pads:ints strides:ints"},
    {"DequantizeLinear", 21, 2, 3, 1, 1, "axis:int block_size:int"},
    {"DequantizeLinear", 23, 2, 3, 1, 1, "axis:int block_size:int output_dtype:int"},
    {"Gelu", 20, 1, 1, 1, 1, "approximate:string"},
    {"GroupNormalization", 18, 3, 3, 1, 1, "epsilon:float num_groups:int!"},
    {"GroupNormalization", 21, 3, 3, 1, 1, "epsilon:float num_groups:int! stash_type:int"},
    {"ImageDecoder", 20, 1, 1, 1, 1, "pixel_format:string"},
    {"LpPool", 18, 1, 1, 1, 1, "auto_pad:string ceil_mode:int dilations:ints kernel_shape:ints! "
     "p:int pads:ints strides:ints"},
    {"Mish", 18, 1, 1, 1, 1, ""},
    {"OptionalHasElement", 18, 0, 1, 1, 1, ""},
    {"Pad", 18, 2, 4, 1, 1, "mode:string"},
    {"QuantizeLinear", 19, 2, 3, 1, 1, "axis:int saturate:int"},
    {"QuantizeLinear", 21, 2, 3, 1, 1, "axis:int block_size:int output_dtype:int saturate:int"},
    {"QuantizeLinear", 23, 2, 3, 1, 1, "axis:int block_size:int output_dtype:int precision:int "
     "saturate:int"},
    {"RMSNormalization", 23, 2, 2, 1, 1, "axis:int epsilon:float stash_type:int"},
    {"ReduceL1", 18, 1, 2, 1, 1, "keepdims:int noop_with_empty_axes:int"},
    {"ReduceL2", 18, 1, 2, 1, 1, "keepdims:int noop_with_empty_axes:int"},
    {"ReduceLogSum", 18, 1, 2, 1, 1, "keepdims:int noop_with_empty_axes:int"},
    {"ReduceLogSumExp", 18, 1, 2, 1, 1, "keepdims:int noop_with_empty_axes:int"},
    {"ReduceMax", 18, 1, 2, 1, 1, "keepdims:int noop_with_empty_axes:int"},
    {"ReduceMean", 18, 1, 2, 1, 1, "keepdims:int noop_with_empty_axes:int"},
    {"ReduceMin", 18, 1, 2, 1, 1, "keepdims:int noop_with_empty_axes:int"},
    {"ReduceProd", 18, 1, 2, 1, 1, "keepdims:int noop_with_empty_axes:int"},
    {"ReduceSumSquare", 18, 1, 2, 1, 1, "keepdims:int noop_with_empty_axes:int"},
    {"RegexFullMatch", 20, 1, 1, 1, 1, "pattern:string"},
    {"Resize", 18, 1, 4, 1, 1, "antialias:int axes:ints coordinate_transformation_mode:string "
     "cubic_coeff_a:float exclude_outside:int extrapolation_value:float "
     "keep_aspect_ratio_policy:string mode:string nearest_mode:string"},
    {"RotaryEmbedding", 23, 3, 4, 1, 1, "interleaved:int num_heads:int rotary_embedding_dim:int"},
    {"Split", 18, 1, 2, 1, kVariadic, "axis:int num_outputs:int"},
    {"StringConcat", 20, 2, 2, 1, 1, ""},
    {"StringSplit", 20, 1, 1, 2, 2, "delimiter:string maxsplit:int"},
    {"Swish", 24, 1, 1, 1, 1, "alpha:float"},
    {"TensorScatter", 24, 2, 3, 1, 1, "axis:int mode:string"},
};
// clang-format on

constexpr std::pair<std::string_view, AttrKind> kKinds[] = {
    {"float", AttrKind::kFloat},     {"int", AttrKind::kInt},
    {"string", AttrKind::kString},   {"tensor", AttrKind::kTensor},
    {"graph", AttrKind::kGraph},     {"sparse_tensor", AttrKind::kSparseTensor},
    {"floats", AttrKind::kFloats},   {"ints", AttrKind::kInts},
    {"strings", AttrKind::kStrings},
};

/// Calls `fn(name, kind, required)` for each word of a row's attribute spec;
/// false when a word is malformed or names an unknown kind.
template <typename Fn>
constexpr bool for_each_attribute(std::string_view spec, Fn&& fn) {
  while (!spec.empty()) {
    const size_t end = spec.find(' ') == std::string_view::npos ? spec.size() : spec.find(' ');
    std::string_view word = spec.substr(0, end);
    spec.remove_prefix(end == spec.size() ? end : end + 1);
    if (word.empty()) continue;
    const size_t colon = word.find(':');
    if (colon == std::string_view::npos || colon == 0) return false;
    std::string_view kind = word.substr(colon + 1);
    const bool required = !kind.empty() && kind.back() == '!';
    if (required) kind.remove_suffix(1);
    bool known = false;
    for (const auto& [k, v] : kKinds)
      if (k == kind) {
        fn(word.substr(0, colon), v, required);
        known = true;
      }
    if (!known) return false;
  }
  return true;
}

constexpr bool rows_are_well_formed() {
  for (const Row& r : kRows)
    if (!for_each_attribute(r.attributes, [](std::string_view, AttrKind, bool) {})) return false;
  return true;
}
static_assert(rows_are_well_formed(), "a row of kRows has a malformed attribute spec");

std::vector<AttrSignature> parse_attributes(std::string_view spec) {
  std::vector<AttrSignature> out;
  for_each_attribute(spec, [&](std::string_view name, AttrKind kind, bool required) {
    out.push_back({name, kind, required});
  });
  return out;
}

}  // namespace

std::string_view attr_kind_name(AttrKind kind) {
  switch (kind) {
    case AttrKind::kFloat:
      return "FLOAT";
    case AttrKind::kInt:
      return "INT";
    case AttrKind::kString:
      return "STRING";
    case AttrKind::kTensor:
      return "TENSOR";
    case AttrKind::kGraph:
      return "GRAPH";
    case AttrKind::kSparseTensor:
      return "SPARSE_TENSOR";
    case AttrKind::kTypeProto:
      return "TYPE_PROTO";
    case AttrKind::kFloats:
      return "FLOATS";
    case AttrKind::kInts:
      return "INTS";
    case AttrKind::kStrings:
      return "STRINGS";
    case AttrKind::kTensors:
      return "TENSORS";
    case AttrKind::kGraphs:
      return "GRAPHS";
    case AttrKind::kSparseTensors:
      return "SPARSE_TENSORS";
    case AttrKind::kTypeProtos:
      return "TYPE_PROTOS";
  }
  return "UNKNOWN";
}

const AttrSignature* OpSignature::find(std::string_view name) const {
  for (const AttrSignature& a : attributes)
    if (a.name == name) return &a;
  return nullptr;
}

const std::vector<OpSignature>& newer_signatures() {
  static const std::vector<OpSignature> rows = [] {
    std::vector<OpSignature> out;
    for (const Row& r : kRows)
      out.push_back({r.op_type, r.since, r.min_inputs, r.max_inputs, r.min_outputs, r.max_outputs,
                     parse_attributes(r.attributes)});
    std::stable_sort(out.begin(), out.end(), [](const OpSignature& a, const OpSignature& b) {
      return a.op_type != b.op_type ? a.op_type < b.op_type : a.since < b.since;
    });
    return out;
  }();
  return rows;
}

const OpSignature* newer_signature(std::string_view op_type, int64_t opset) {
  const auto& rows = newer_signatures();
  auto it =
      std::lower_bound(rows.begin(), rows.end(), op_type,
                       [](const OpSignature& s, std::string_view op) { return s.op_type < op; });
  const OpSignature* best = nullptr;
  for (; it != rows.end() && it->op_type == op_type; ++it)
    if (it->since <= opset) best = &*it;
  return best;
}

}  // namespace hone::ops
