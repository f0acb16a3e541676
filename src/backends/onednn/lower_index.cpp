// Gather and Expand as reorders of strided views, their indices or target
// shape known when the plan is built (constants, or values computed from
// dims). Gather: each run of consecutive indices is a view of the data,
// copied by one reorder into its place in the output; the select of q, k and
// v out of a packed projection (`x[0]`, a scalar index) is one reorder.
// oneDNN 2.6 has no gather primitive: indices computed at run time
// (embedding lookups) are hone's own step (own_steps.cpp). Expand:
// one reorder from a view whose broadcast axes have stride 0.
#include <string>
#include <vector>

#include "backends/onednn/plan.h"
#include "ops/attrs.h"
#include "ops/axis.h"
#include "ops/broadcast.h"

namespace hone::onednn {
namespace {

using dnnl::memory;

/// More runs than this would make a plan of that many reorders: refused.
constexpr size_t kMaxGatherRuns = 1024;

}  // namespace

Result<void> lower_gather(PlanBuilder& b, const Node& n) {
  const dims_t in = b.value(n.inputs[0]).dims;
  const auto rank = static_cast<int64_t>(in.size());
  if (in.empty()) return fail(ErrorCode::kInvalidArgument, "Gather of a scalar");
  const int64_t axis = ops::axis_attr(n);
  const int64_t a = ops::try_normalize_axis(axis, rank).value_or(-1);
  if (a < 0)
    return fail(ErrorCode::kInvalidArgument,
                "Gather axis " + std::to_string(axis) + " out of range for " + shape_to_string(in));
  const Tensor* idx = b.constant(n.inputs[1]);
  if (idx == nullptr) return lower_gather_at_run_time(b, n);  // own_steps.cpp
  if (idx->dtype() != DType::kI64 && idx->dtype() != DType::kI32)
    return fail(
        ErrorCode::kUnsupported,
        "Gather indices are " + std::string(dtype_name(idx->dtype())) + "; i64 or i32 only");
  const auto ua = static_cast<size_t>(a);
  const int64_t dim = in[ua];
  // Each index, made positive and checked; then runs of consecutive ones.
  struct Run {
    int64_t first, count, at;  // data positions first.., output positions at..
  };
  std::vector<Run> runs;
  for (int64_t j = 0; j < idx->numel(); ++j) {
    int64_t i = tensor_element_as_int64(*idx, j);
    if (i < -dim || i >= dim)
      return fail(ErrorCode::kInvalidArgument, "Gather index " + std::to_string(i) +
                                                   " out of range for axis " + std::to_string(a) +
                                                   " of " + shape_to_string(in));
    if (i < 0) i += dim;
    if (!runs.empty() && runs.back().first + runs.back().count == i)
      ++runs.back().count;
    else
      runs.push_back({i, 1, j});
  }
  if (runs.empty()) {  // no index: an empty value, no step (lower_empty.cpp)
    dims_t out(in.begin(), in.begin() + a);
    out.insert(out.end(), idx->shape().begin(), idx->shape().end());
    out.insert(out.end(), in.begin() + a + 1, in.end());
    b.set_empty(n.outputs[0], Tensor::zeros(DType::kF32, out));
    return {};
  }
  if (runs.size() > kMaxGatherRuns)
    return fail(ErrorCode::kUnsupported, "Gather of " + std::to_string(runs.size()) +
                                             " separate runs of indices (one reorder each; at "
                                             "most " +
                                             std::to_string(kMaxGatherRuns) + ")");
  // Output: data dims before the axis, the indices' dims, data dims after.
  dims_t out(in.begin(), in.begin() + a);
  out.insert(out.end(), idx->shape().begin(), idx->shape().end());
  out.insert(out.end(), in.begin() + a + 1, in.end());
  dims_t strides(in.size(), 1);
  for (size_t i = in.size() - 1; i > 0; --i) strides[i - 1] = strides[i] * in[i];
  // The output's bytes as the data's dims with the axis as long as the
  // indices: row-major, so a run is a view at its output position.
  dims_t out3 = in;
  out3[ua] = idx->numel();
  dims_t out_strides(in.size(), 1);
  for (size_t i = in.size() - 1; i > 0; --i) out_strides[i - 1] = out_strides[i] * out3[i];
  const BufferRef src = b.plain(n.inputs[0]);
  const md_t dst = plain_md(out);
  const BufferRef ref{b.new_temp(dst), dst};
  for (const Run& r : runs) {
    dims_t part = in;
    part[ua] = r.count;
    md_t from(part, memory::data_type::f32, strides);
    from.data.offset0 = r.first * strides[ua];
    md_t to(part, memory::data_type::f32, out_strides);
    to.data.offset0 = r.at * out_strides[ua];
    dnnl::reorder::primitive_desc pd(cpu_engine(), from, cpu_engine(), to, user_scratch());
    b.add_step("reorder", dnnl::reorder(pd), pd,
               {{DNNL_ARG_FROM, {src.buffer, from}}, {DNNL_ARG_TO, {ref.buffer, to}}});
  }
  b.set(n.outputs[0], PValue{out, ref});
  return {};
}

Result<void> lower_expand(PlanBuilder& b, const Node& n) {
  const dims_t in = b.value(n.inputs[0]).dims;
  const Tensor* shape = n.inputs.size() > 1 ? b.constant(n.inputs[1]) : nullptr;
  if (shape == nullptr || shape->dtype() != DType::kI64)
    return fail(ErrorCode::kUnsupported, "Expand's shape is not known when the plan is built");
  dims_t target;
  for (int64_t i = 0; i < shape->numel(); ++i) target.push_back(tensor_element_as_int64(*shape, i));
  HONE_TRY(const dims_t out, ops::broadcast_shapes({in, target}));
  if (shape_numel(out) == 0) {  // an empty value, no step (lower_empty.cpp)
    b.set_empty(n.outputs[0], Tensor::zeros(DType::kF32, out));
    return {};
  }
  if (out == in) {  // nothing to broadcast: the same bytes
    alias(b, n, out);
    return {};
  }
  const BufferRef src = b.plain(n.inputs[0]);
  const md_t from(out, memory::data_type::f32, ops::broadcast_strides(in, out));
  const md_t dst = plain_md(out);
  dnnl::reorder::primitive_desc pd(cpu_engine(), from, cpu_engine(), dst, user_scratch());
  const BufferRef ref{b.new_temp(dst), dst};
  b.add_step("reorder", dnnl::reorder(pd), pd,
             {{DNNL_ARG_FROM, {src.buffer, from}}, {DNNL_ARG_TO, ref}});
  b.set(n.outputs[0], PValue{out, ref});
  return {};
}

}  // namespace hone::onednn
