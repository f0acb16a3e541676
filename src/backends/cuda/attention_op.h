// Private to the cuda backend: the attention unit's op (ops_attention.cpp:
// its fused kernels and the timed choice; attention_unfused.cpp: its member
// nodes' own plans in sequence), made by create_attention()
// (attention_units.cpp, which also recognises the units).
//
//   subs.push_back({std::move(member_unit.op), input_codes});
//   u.op = make_attention_op(g, spec, std::move(subs), members, u.inputs, io, settings, label);
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/cuda/op.h"

namespace hone::cuda {

/// One member node's own op inside an attention unit.
struct AttentionSub {
  std::unique_ptr<Op> op;
  std::vector<int> in;  // per input: index into the unit's inputs, or -1 - (earlier sub)
};

/// The attention unit's op: `subs` are its members' ops (`sub_nodes`: their
/// nodes, in order), `inputs` the unit's inputs, `io` the unit-input indices
/// of q, k, v and the mask (-1: none). `g` outlives the op.
std::unique_ptr<Op> make_attention_op(const Graph& g, AttentionSpec spec,
                                      std::vector<AttentionSub> subs, std::vector<NodeId> sub_nodes,
                                      std::vector<ValueId> inputs, std::vector<int> io,
                                      BuildSettings s, std::string label);
/// The unfused path: the member nodes' own plans (`subs`) in sequence,
/// intermediates in the workspace. `made`: each member's output dims.
[[nodiscard]] Result<OpPlan> plan_unfused_attention(const std::vector<AttentionSub>& subs,
                                                    const std::string& label,
                                                    const std::vector<dims_t>& in,
                                                    const PlanEnv& env,
                                                    std::vector<dims_t>* made_out);
/// The scalar index of a Gather that selects one slice (a constant), or nothing.
std::optional<int64_t> gather_index(const Graph& g, const Node& n);

}  // namespace hone::cuda
