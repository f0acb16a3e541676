// The attention unit's unfused path (attention_op.h): its member nodes' own
// units (transposes, scale chains, batched GEMMs, softmax) run in sequence,
// intermediates in the workspace; it accepts every problem the nodes accept.
#include <algorithm>
#include <memory>

#include "backends/cuda/attention_op.h"

namespace hone::cuda {

Result<OpPlan> plan_unfused_attention(const std::vector<AttentionSub>& subs,
                                      const std::string& label, const std::vector<dims_t>& in,
                                      const PlanEnv& env, std::vector<dims_t>* made_out) {
  struct Step {
    OpPlan p;
    std::vector<int> in;
    // The AttentionSub::in code whose bytes its output views (any value: -2 is the
    // second member), when `view`; else it has its own buffer.
    bool view = false;
    int view_of = 0;
    size_t view_offset = 0, offset = 0;
    bool to_out = false;  // writes the unit's output (the last member is a view of it)
  };
  std::vector<Step> steps(subs.size());
  std::vector<dims_t> made(subs.size());
  size_t total = 0, ws = 0;
  std::string names;
  for (size_t i = 0; i < subs.size(); ++i) {
    std::vector<dims_t> dims;
    for (int code : subs[i].in)
      dims.push_back(code >= 0 ? in[static_cast<size_t>(code)]
                               : made[static_cast<size_t>(-1 - code)]);
    HONE_TRY(OpPlan p, subs[i].op->plan(dims, env));
    if (p.outputs.size() != 1 ||
        std::any_of(p.host.begin(), p.host.end(), [](const auto& h) { return h != nullptr; }))
      return fail(ErrorCode::kInternal, label + ": a member makes other than one device value");
    made[i] = p.outputs[0];
    Step& st = steps[i];
    st.in = subs[i].in;
    if (!p.alias.empty() && p.alias[0] >= 0) {
      st.view = true;
      st.view_of = subs[i].in[static_cast<size_t>(p.alias[0])];
      st.view_offset =
          (p.alias_offset.empty() ? 0 : static_cast<size_t>(p.alias_offset[0])) * sizeof(float);
    } else if (i + 1 < subs.size()) {
      st.offset = total;
      total += round256(static_cast<size_t>(numel_of(p.outputs[0])) * sizeof(float));
    }
    ws = std::max(ws, p.workspace_bytes);
    if (p.run) names += (names.empty() ? "" : ",") + p.kernel;
    st.p = std::move(p);
  }
  if (steps.back().view) {
    // The heads-merging Reshape after the output Transpose: the Transpose
    // writes the unit's output, which the Reshape sees with its dims.
    const Step& last = steps.back();
    const int j = -1 - last.view_of;
    if (last.view_of >= 0 || last.view_offset != 0 || steps[static_cast<size_t>(j)].view)
      return fail(ErrorCode::kInternal, label + ": the last member is a view of no member");
    steps[static_cast<size_t>(j)].to_out = true;
  }
  *made_out = made;
  OpPlan out;
  out.outputs = {made.back()};
  out.workspace_bytes = total + ws;
  out.kernel = "attention.unfused[" + names + "]";
  auto shared = std::make_shared<std::vector<Step>>(std::move(steps));
  out.run = [shared, total](const ExecCtx& c, const Bind& b) -> Result<void> {
    const std::vector<Step>& st = *shared;
    std::vector<CUdeviceptr> ptr(st.size());
    auto at = [&](int code) {
      return code >= 0 ? b.in[static_cast<size_t>(code)] : ptr[static_cast<size_t>(-1 - code)];
    };
    for (size_t i = 0; i < st.size(); ++i) {
      if (st[i].view)
        ptr[i] = at(st[i].view_of) + st[i].view_offset;
      else
        ptr[i] = i + 1 < st.size() && !st[i].to_out ? b.workspace + st[i].offset : b.out[0];
      if (!st[i].p.run) continue;
      Bind sb;
      for (int code : st[i].in) {
        sb.in.push_back(at(code));
        sb.half.push_back(code >= 0 ? built_half(b, static_cast<size_t>(code)) : 0);
      }
      sb.out = {ptr[i]};
      sb.workspace = b.workspace + total;
      HONE_CHECK_OK(st[i].p.run(c, sb));
    }
    return {};
  };
  return out;
}

}  // namespace hone::cuda
