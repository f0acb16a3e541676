#include "backends/common/empty_values.h"

#include <map>

namespace hone::empty_values {

std::optional<size_t> shape_from_values(const std::string& op) {
  static const std::map<std::string, size_t> kFrom = {{"Reshape", 1},
                                                      {"Expand", 1},
                                                      {"Tile", 1},
                                                      {"Slice", 1},
                                                      {"Pad", 1},
                                                      {"Resize", 1},
                                                      {"Upsample", 1},
                                                      {"Split", 1},
                                                      {"Squeeze", 1},
                                                      {"Unsqueeze", 1},
                                                      {"TopK", 1},
                                                      {"OneHot", 1},
                                                      {"CenterCropPad", 1},
                                                      {"Compress", 1},
                                                      {"ReduceSum", 1},
                                                      {"ReduceMean", 1},
                                                      {"ReduceMax", 1},
                                                      {"ReduceMin", 1},
                                                      {"ReduceProd", 1},
                                                      {"ReduceL1", 1},
                                                      {"ReduceL2", 1},
                                                      {"ReduceLogSum", 1},
                                                      {"ReduceLogSumExp", 1},
                                                      {"ReduceSumSquare", 1},
                                                      {"ConstantOfShape", 0},
                                                      {"Range", 0},
                                                      {"NonZero", 0},
                                                      {"Unique", 0},
                                                      {"NonMaxSuppression", 0}};
  auto it = kFrom.find(op);
  return it == kFrom.end() ? std::nullopt : std::optional(it->second);
}

bool Outcome::all_empty() const {
  for (const Tensor& t : outputs)
    if (t.numel() != 0) return false;
  return true;
}

Result<Outcome> evaluate(const Graph& g, const Node& n, const host_eval::Env& env,
                         const std::function<DType(ValueId)>& dtype) {
  Outcome r;
  r.known = true;
  for (ValueId v : n.inputs) r.known = r.known && (v < 0 || env.value(v) != nullptr);
  if (r.known) {
    HONE_TRY(r.outputs, host_eval::evaluate(g, n, env));
    return r;
  }
  // Zeros stand for the inputs known only at run time: only their dims count.
  std::map<ValueId, Tensor> zeros;
  const std::optional<size_t> from = shape_from_values(n.op_type);
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const ValueId v = n.inputs[i];
    if (v < 0 || env.value(v) != nullptr || zeros.count(v)) continue;
    if (from && i >= *from)
      return fail(ErrorCode::kUnsupported,
                  n.op_type + " reads an empty tensor, and its output's shape depends on input '" +
                      g.value(v).name + "', known only at run time");
    const std::vector<int64_t>* d = env.dims(v);
    if (d == nullptr)
      return fail(ErrorCode::kInternal, "the dims of '" + g.value(v).name + "' are not known");
    const DType t = dtype(v) == DType::kUndefined ? DType::kF32 : dtype(v);
    HONE_TRY(Tensor z, Tensor::allocate(t, *d));
    zeros.emplace(v, std::move(z));
  }
  host_eval::Env on_zeros;
  on_zeros.dims = env.dims;
  on_zeros.value = [&](ValueId v) -> const Tensor* {
    auto it = zeros.find(v);
    return it != zeros.end() ? &it->second : env.value(v);
  };
  HONE_TRY(r.outputs, host_eval::evaluate(g, n, on_zeros));
  return r;
}

bool scatter_without_index(const Node& n, const std::function<bool(ValueId)>& is_empty) {
  return (n.op_type == "ScatterElements" || n.op_type == "ScatterND" || n.op_type == "Scatter") &&
         n.inputs.size() > 1 && n.inputs[0] >= 0 && n.inputs[1] >= 0 && is_empty(n.inputs[1]);
}

}  // namespace hone::empty_values
