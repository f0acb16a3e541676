// GraphSpec at run time: flattening sample trees into graph inputs, binding
// dims, rebuilding output trees, re-batching and random samples.
#include "hone/graph_spec.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <set>

#include <fmt/core.h>

#include "tune/graph_spec_internal.h"
#include "tune/sample_path.h"

namespace hone {
namespace tuning {

std::string describe_tensor_spec(const TensorSpec& t) {
  std::string out(dtype_name(t.dtype));
  if (t.scalar_leaf) return out + " (number)";
  if (!t.rank_known) return out + "[?...]";
  out += "[";
  for (size_t a = 0; a < t.dims.size(); ++a) {
    if (a) out += ",";
    const DimSpec& d = t.dims[a];
    out += d.kind == DimSpec::Kind::kStatic ? std::to_string(d.size)
                                            : (d.name.empty() ? std::string("?") : d.name);
  }
  return out + "]";
}

std::string where(const TensorSpec& t, const char* role) {
  return quote_path(t.path) + " (" + role + " '" + t.name + "')";
}

Result<Tensor> leaf_to_tensor(const SampleValue& leaf, const TensorSpec& spec) {
  if (leaf.is_tensor()) {
    const Tensor& t = leaf.tensor();
    if (t.dtype() != spec.dtype)
      return fail(ErrorCode::kInvalidArgument, where(spec) + " is " + t.describe() +
                                                   " but the model takes " +
                                                   describe_tensor_spec(spec));
    return t;
  }
  if (!leaf.is_scalar())
    return fail(ErrorCode::kInvalidArgument, where(spec) + " is a " +
                                                 (leaf.is_map() ? "map" : "list") + ", expected " +
                                                 describe_tensor_spec(spec));
  if (!spec.dims.empty())
    return fail(ErrorCode::kInvalidArgument, where(spec) + " is a number but the model takes " +
                                                 describe_tensor_spec(spec) + "; pass a tensor");
  const double v = leaf.scalar();
  if (is_integer(spec.dtype) || spec.dtype == DType::kBool) {
    // The target's range, in doubles: its bounds are powers of two, so exact.
    double lo = 0, hi = 2;  // bool: 0 or 1
    if (is_integer(spec.dtype)) {
      const int bits = static_cast<int>(dtype_size(spec.dtype) * 8);
      const bool is_signed = is_signed_integer(spec.dtype);
      lo = is_signed ? -std::ldexp(1.0, bits - 1) : 0.0;
      hi = std::ldexp(1.0, is_signed ? bits - 1 : bits);
    }
    if (!std::isfinite(v) || v != std::floor(v) || v < lo || v >= hi)
      return fail(ErrorCode::kInvalidArgument, where(spec) + " is " + fmt::format("{}", v) +
                                                   ", not a value of " +
                                                   std::string(dtype_name(spec.dtype)));
  }
  HONE_TRY(Tensor t, Tensor::allocate(spec.dtype, {}));
  tensor_set_element_from_double(t, 0, v);
  return t;
}

std::vector<std::string> default_output_paths(const std::vector<std::string>& names) {
  if (names.size() == 1 && is_path_key(names[0])) return {""};
  auto forms_tree = [](const std::vector<std::string>& paths) {
    std::vector<std::pair<std::string, SampleValue>> leaves;
    for (const auto& p : paths) {
      if (p.empty()) return false;
      leaves.emplace_back(p, SampleValue(0.0));
    }
    return sample_from_leaves(leaves).has_value();
  };
  if (forms_tree(names)) return names;
  std::vector<std::string> flat;
  for (std::string n : names) {
    for (char& c : n)
      if (c == '.' || c == '[' || c == ']') c = '_';
    flat.push_back(n);
  }
  if (forms_tree(flat)) return flat;
  std::vector<std::string> items;
  for (size_t i = 0; i < names.size(); ++i) items.push_back(item_path("", i));
  return items;
}

int first_batch_axis(const TensorSpec& t) {
  for (size_t a = 0; a < t.dims.size(); ++a)
    if (t.dims[a].kind == DimSpec::Kind::kBatch) return static_cast<int>(a);
  return -1;
}

}  // namespace tuning

using tuning::describe_tensor_spec;
using tuning::where;

Result<std::vector<Tensor>> GraphSpec::flatten(const Sample& sample) const {
  HONE_CHECK_OK(check_sample(sample));
  std::set<std::string> paths;
  for (const TensorSpec& t : inputs) paths.insert(t.path);
  for (const auto& [path, leaf] : sample.leaves()) {
    if (paths.count(path)) continue;
    std::string known;
    for (const TensorSpec& t : inputs) known += (known.empty() ? "" : ", ") + t.path;
    return fail(ErrorCode::kInvalidArgument, "sample leaf " + tuning::quote_path(path) +
                                                 " is not an input of the model (input paths: " +
                                                 (known.empty() ? "none" : known) + ")");
  }
  std::vector<Tensor> flat;
  for (const TensorSpec& t : inputs) {
    const SampleValue* leaf = sample.find(t.path);
    if (!leaf)
      return fail(ErrorCode::kInvalidArgument, "the sample has nothing at " + where(t) +
                                                   ", which the model takes as " +
                                                   describe_tensor_spec(t));
    HONE_TRY(Tensor x, tuning::leaf_to_tensor(*leaf, t));
    flat.push_back(std::move(x));
  }
  HONE_CHECK_OK(bind_dims(flat));
  return flat;
}

Result<std::map<std::string, int64_t>> GraphSpec::bind_dims(const std::vector<Tensor>& flat) const {
  if (flat.size() != inputs.size())
    return fail(ErrorCode::kInvalidArgument, "got " + std::to_string(flat.size()) +
                                                 " input tensor(s), the model takes " +
                                                 std::to_string(inputs.size()));
  std::map<std::string, int64_t> values;
  std::map<std::string, std::string> seen_at;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const TensorSpec& t = inputs[k];
    const Tensor& x = flat[k];
    if (x.dtype() != t.dtype)
      return fail(
          ErrorCode::kInvalidArgument,
          where(t) + " is " + x.describe() + " but the model takes " + describe_tensor_spec(t));
    if (x.rank() != t.dims.size())
      return fail(ErrorCode::kInvalidArgument,
                  where(t) + " is " + x.describe() + ", rank " + std::to_string(x.rank()) +
                      ", but the model takes rank " + std::to_string(t.dims.size()) + ": " +
                      describe_tensor_spec(t));
    for (size_t a = 0; a < t.dims.size(); ++a) {
      const DimSpec& d = t.dims[a];
      const int64_t n = x.dim(a);
      const std::string at = where(t) + " axis " + std::to_string(a);
      if (d.kind == DimSpec::Kind::kStatic) {
        if (n != d.size)
          return fail(ErrorCode::kInvalidArgument, at + " is " + std::to_string(n) +
                                                       " but the model fixes it at " +
                                                       std::to_string(d.size));
        continue;
      }
      auto b = bounds.find(d.name);
      if (b != bounds.end() && (n < b->second.min || n > b->second.max))
        return fail(ErrorCode::kInvalidArgument,
                    at + " (" + d.name + ") is " + std::to_string(n) + ", outside the bounds " +
                        std::to_string(b->second.min) + ".." + std::to_string(b->second.max));
      auto [it, fresh] = values.emplace(d.name, n);
      if (!fresh && it->second != n)
        return fail(ErrorCode::kInvalidArgument,
                    "dim '" + d.name + "' is " + std::to_string(it->second) + " at " +
                        seen_at[d.name] + " but " + std::to_string(n) + " at " + at);
      if (fresh) seen_at[d.name] = at;
    }
  }
  return values;
}

Result<SampleValue> GraphSpec::unflatten_outputs(std::vector<Tensor> outs) const {
  if (outs.size() != outputs.size())
    return fail(ErrorCode::kInvalidArgument, "got " + std::to_string(outs.size()) +
                                                 " output tensor(s), the model has " +
                                                 std::to_string(outputs.size()));
  std::vector<std::pair<std::string, SampleValue>> leaves;
  for (size_t k = 0; k < outputs.size(); ++k) {
    const TensorSpec& t = outputs[k];
    const Tensor& y = outs[k];
    const std::string at = where(t, "output");
    if (t.dtype != DType::kUndefined && y.dtype() != t.dtype)
      return fail(
          ErrorCode::kInvalidArgument,
          at + " is " + y.describe() + " but the model declares " + describe_tensor_spec(t));
    if (t.rank_known) {
      if (y.rank() != t.dims.size())
        return fail(
            ErrorCode::kInvalidArgument,
            at + " is " + y.describe() + " but the model declares " + describe_tensor_spec(t));
      for (size_t a = 0; a < t.dims.size(); ++a)
        if (t.dims[a].kind == DimSpec::Kind::kStatic && y.dim(a) != t.dims[a].size)
          return fail(ErrorCode::kInvalidArgument,
                      at + " axis " + std::to_string(a) + " is " + std::to_string(y.dim(a)) +
                          " but the model declares " + std::to_string(t.dims[a].size));
    }
    leaves.emplace_back(t.path, std::move(outs[k]));
  }
  return sample_from_leaves(leaves);
}

Result<void> GraphSpec::set_output_paths(std::vector<std::string> paths) {
  if (paths.size() != outputs.size())
    return fail(ErrorCode::kInvalidArgument, "set_output_paths: " + std::to_string(paths.size()) +
                                                 " path(s) for " + std::to_string(outputs.size()) +
                                                 " output(s)");
  std::vector<std::pair<std::string, SampleValue>> leaves;
  for (const std::string& p : paths) leaves.emplace_back(p, SampleValue(0.0));
  if (auto tree = sample_from_leaves(leaves); !tree)
    return fail(std::move(tree).error().add_context("while setting the output paths"));
  for (size_t k = 0; k < outputs.size(); ++k) outputs[k].path = std::move(paths[k]);
  return {};
}

Result<int64_t> GraphSpec::batch_size(const Sample& sample) const {
  if (batch_dim.empty()) return 1;
  int64_t batch = -1;
  std::string first;
  for (const TensorSpec& t : inputs) {
    if (t.batch_axis < 0) continue;
    const SampleValue* leaf = sample.find(t.path);
    if (!leaf || !leaf->is_tensor())
      return fail(ErrorCode::kInvalidArgument,
                  "the sample has no tensor at " + where(t) + ", which has the batch axis");
    const Tensor& x = leaf->tensor();
    if (x.rank() <= static_cast<size_t>(t.batch_axis))
      return fail(ErrorCode::kInvalidArgument, where(t) + " is " + x.describe() +
                                                   ", which has no batch axis " +
                                                   std::to_string(t.batch_axis));
    const int64_t n = x.dim(static_cast<size_t>(t.batch_axis));
    if (batch >= 0 && n != batch)
      return fail(ErrorCode::kInvalidArgument, "batch is " + std::to_string(batch) + " at " +
                                                   first + " but " + std::to_string(n) + " at " +
                                                   where(t));
    if (batch < 0) first = where(t);
    batch = n;
  }
  return batch < 0 ? 1 : batch;
}

namespace {

// Rows of `x` along `axis`, taken cyclically: row j of the result is row
// j % old of `x`, so a smaller batch is a slice and a larger one repeats.
Result<Tensor> resize_axis(const Tensor& x, size_t axis, int64_t n) {
  std::vector<int64_t> shape = x.shape();
  const int64_t old = shape[axis];
  shape[axis] = n;
  HONE_TRY(Tensor out, Tensor::allocate(x.dtype(), shape));
  int64_t outer = 1;
  for (size_t a = 0; a < axis; ++a) outer *= shape[a];
  int64_t inner = 1;
  for (size_t a = axis + 1; a < shape.size(); ++a) inner *= shape[a];
  const size_t row = static_cast<size_t>(inner) * dtype_size(x.dtype());
  const auto* src = static_cast<const uint8_t*>(x.raw());
  auto* dst = static_cast<uint8_t*>(out.raw());
  if (row == 0) return out;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < n; ++j)
      std::memcpy(dst + static_cast<size_t>(o * n + j) * row,
                  src + static_cast<size_t>(o * old + j % old) * row, row);
  return out;
}

}  // namespace

Result<Sample> GraphSpec::rebatch(const Sample& sample, int64_t batch) const {
  if (batch_dim.empty())
    return fail(ErrorCode::kFailedPrecondition,
                "rebatch: the model has no batch dim (declare one, e.g. batch=1:8:32)");
  if (batch < 1)
    return fail(ErrorCode::kInvalidArgument,
                "rebatch: batch " + std::to_string(batch) + " is not positive");
  HONE_TRY(int64_t current, batch_size(sample));
  if (current == 0)
    return fail(ErrorCode::kInvalidArgument,
                "rebatch: the sample's batch is empty, so there are no rows to repeat");
  Sample out = sample;
  for (const TensorSpec& t : inputs) {
    if (t.batch_axis < 0) continue;
    for (size_t a = static_cast<size_t>(t.batch_axis) + 1; a < t.dims.size(); ++a)
      if (t.dims[a].kind == DimSpec::Kind::kBatch)
        return fail(ErrorCode::kUnsupported,
                    "rebatch: " + where(t) + " has the batch dim on axes " +
                        std::to_string(t.batch_axis) + " and " + std::to_string(a));
    SampleValue* leaf = out.find(t.path);
    HONE_TRY(Tensor resized, resize_axis(leaf->tensor(), static_cast<size_t>(t.batch_axis), batch));
    *leaf = std::move(resized);
  }
  return out;
}

Result<Sample> GraphSpec::random_sample(const std::map<std::string, int64_t>& dims,
                                        uint64_t seed) const {
  for (const auto& [name, value] : dims) {
    auto b = bounds.find(name);
    if (b == bounds.end()) {
      std::string known;
      for (const auto& [n, unused] : bounds) known += (known.empty() ? "" : ", ") + n;
      return fail(ErrorCode::kInvalidArgument,
                  "random sample: the model has no dim '" + name +
                      "' (its dims: " + (known.empty() ? "none" : known) + ")");
    }
    if (value < b->second.min || value > b->second.max)
      return fail(ErrorCode::kInvalidArgument,
                  "random sample: " + name + "=" + std::to_string(value) +
                      " is outside the bounds " + std::to_string(b->second.min) + ".." +
                      std::to_string(b->second.max));
  }
  std::mt19937_64 rng(seed);
  std::vector<std::pair<std::string, SampleValue>> leaves;
  for (const TensorSpec& t : inputs) {
    std::vector<int64_t> shape;
    for (const DimSpec& d : t.dims) {
      if (d.kind == DimSpec::Kind::kStatic) {
        shape.push_back(d.size);
      } else if (auto it = dims.find(d.name); it != dims.end()) {
        shape.push_back(it->second);
      } else if (auto b = bounds.find(d.name); b != bounds.end()) {
        shape.push_back(b->second.opt);
      } else {
        return fail(ErrorCode::kInvalidArgument,
                    "random sample: " + where(t) + " has a dim without bounds ('" + d.name + "')");
      }
    }
    HONE_TRY(Tensor x, random_tensor(t.dtype, shape, rng));
    if (t.scalar_leaf)
      leaves.emplace_back(t.path, SampleValue(tensor_element_as_double(x, 0)));
    else
      leaves.emplace_back(t.path, SampleValue(std::move(x)));
  }
  return sample_from_leaves(leaves);
}

std::string GraphSpec::max_bounds_text() const {
  std::string out;
  for (const auto& [name, b] : bounds)
    out += (out.empty() ? "" : ",") + name + "=" + std::to_string(b.max);
  return out;
}

}  // namespace hone
