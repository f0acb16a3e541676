// GraphSpec::learn_outputs: naming output axes from what the model returned.
// Shape inference often leaves output dims unknown or gives them names of its
// own ("unk__3"); the sizes the model actually returns tell which input dim
// each one follows, which is what a tuner needs to find an output's batch axis.
#include <algorithm>

#include "hone/graph_spec.h"
#include "tune/graph_spec_internal.h"

namespace hone {

Result<void> GraphSpec::learn_outputs(const std::vector<Sample>& samples,
                                      const std::vector<std::vector<Tensor>>& outs) {
  if (samples.size() != outs.size() || samples.empty())
    return fail(ErrorCode::kInvalidArgument, "learn_outputs: " + std::to_string(samples.size()) +
                                                 " sample(s) but " + std::to_string(outs.size()) +
                                                 " output list(s); need one per sample, >= 1");
  // values[name][s]: the input dims of each sample.
  std::map<std::string, std::vector<int64_t>> values;
  for (size_t s = 0; s < samples.size(); ++s) {
    auto flat = flatten(samples[s]);
    if (!flat) return fail(std::move(flat).error().add_context("in sample " + std::to_string(s)));
    HONE_TRY(auto bound, bind_dims(*flat));
    for (const auto& [name, v] : bound) values[name].push_back(v);
    if (outs[s].size() != outputs.size())
      return fail(ErrorCode::kInvalidArgument, "learn_outputs: sample " + std::to_string(s) +
                                                   " has " + std::to_string(outs[s].size()) +
                                                   " output(s), the model has " +
                                                   std::to_string(outputs.size()));
  }
  GraphSpec next = *this;
  for (size_t k = 0; k < outputs.size(); ++k) {
    TensorSpec& t = next.outputs[k];
    const std::string at = tuning::where(t, "output");
    if (t.dtype == DType::kUndefined) t.dtype = outs[0][k].dtype();
    if (!t.rank_known) {
      t.rank_known = true;
      t.dims.assign(outs[0][k].rank(), DimSpec{DimSpec::Kind::kDynamic, 0, ""});
    }
    for (size_t s = 0; s < samples.size(); ++s) {
      const Tensor& y = outs[s][k];
      if (y.dtype() != t.dtype || y.rank() != t.dims.size())
        return fail(ErrorCode::kInvalidArgument,
                    at + " is " + y.describe() + " for sample " + std::to_string(s) +
                        ", but the model declares " + tuning::describe_tensor_spec(t));
    }
    for (size_t a = 0; a < t.dims.size(); ++a) {
      DimSpec& d = t.dims[a];
      std::vector<int64_t> sizes;
      for (size_t s = 0; s < samples.size(); ++s) sizes.push_back(outs[s][k].dim(a));
      const std::string axis = at + " axis " + std::to_string(a);
      if (d.kind == DimSpec::Kind::kStatic) {
        for (size_t s = 0; s < sizes.size(); ++s)
          if (sizes[s] != d.size)
            return fail(ErrorCode::kInvalidArgument, axis + " is " + std::to_string(sizes[s]) +
                                                         " for sample " + std::to_string(s) +
                                                         ", but the model declares " +
                                                         std::to_string(d.size));
        continue;
      }
      if (auto it = values.find(d.name); it != values.end()) {
        if (it->second != sizes)
          return fail(ErrorCode::kInvalidArgument, axis + " is dim '" + d.name +
                                                       "' in the model, but its sizes differ from "
                                                       "that dim's in the inputs");
        continue;
      }
      // Unnamed, or a name only outputs use: take the input dim it follows,
      // the batch dim first; leave it alone when that is ambiguous.
      // A dim that never varied proves nothing.
      std::vector<std::string> follows;
      for (const auto& [name, v] : values)
        if (v == sizes && std::any_of(v.begin(), v.end(), [&](int64_t x) { return x != v[0]; }))
          follows.push_back(name);
      const bool batch = std::find(follows.begin(), follows.end(), batch_dim) != follows.end();
      if (batch) {
        d = {DimSpec::Kind::kBatch, 0, batch_dim};
      } else if (follows.size() == 1) {
        d = {DimSpec::Kind::kDynamic, 0, follows[0]};
      }
    }
    t.batch_axis = tuning::first_batch_axis(t);
  }
  HONE_CHECK_OK_CTX(next.validate(), "while checking the learned outputs");
  *this = std::move(next);
  return {};
}

}  // namespace hone
