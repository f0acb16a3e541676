// CudaBlock::build: one input-shape signature of a block into a Program.
// Every value gets a slot (arena offset, constant, host value or view), every
// unit's op is planned for its input dims, and the steps share one workspace.
#include <algorithm>
#include <map>
#include <string>

#include "backends/cuda/cuda_block.h"
#include "backends/cuda/storage.h"
#include "core/log.h"

namespace hone::cuda {

Result<std::shared_ptr<const Program>> CudaBlock::build(const ShapeSignature& sig) const {
  if (settings_.math.half == 0 || !settings_.math.half_activations) {
    HONE_TRY(Built b, build_as(sig, false));
    publish(b.lines);
    return std::move(b.program);
  }
  if (settings_.math.activations_auto) return build_auto(sig);
  HONE_TRY(Built b, build_as(sig, true));
  publish(b.lines);
  return std::move(b.program);
}

void CudaBlock::publish(const std::vector<std::string>& lines) const {
  std::lock_guard lock(stats_->mu);
  for (const std::string& l : lines)
    if (stats_->seen.insert(l).second) stats_->kernel_lines.push_back(l);
}

Result<CudaBlock::Built> CudaBlock::build_as(const ShapeSignature& sig, bool half_acts) const {
  const Graph& g = graph();
  if (sig.size() != g.inputs().size())
    return fail(ErrorCode::kInvalidArgument, "block expects " + std::to_string(g.inputs().size()) +
                                                 " inputs, got " + std::to_string(sig.size()));
  auto program = std::make_shared<Program>();
  std::map<ValueId, size_t> slot_of;
  auto new_slot = [&](const dims_t& dims, DType dtype) {
    program->slots.push_back({false, program->arena_bytes, 0, 0, dims, dtype, nullptr});
    program->arena_bytes += round256(static_cast<size_t>(numel_of(dims)) * dtype_size(dtype));
    return program->slots.size() - 1;
  };
  for (size_t i = 0; i < sig.size(); ++i) {
    if (numel_of(sig[i]) == 0)
      return fail(ErrorCode::kUnsupported,
                  "input '" + g.value(g.inputs()[i]).name + "' is empty; cuda blocks need data");
    // Integer and bool inputs keep their dtype (input_dtype); key_of() sent
    // any other run to the reference.
    program->input_slots.push_back(new_slot(sig[i], input_dtype(g.value(g.inputs()[i]).dtype)));
    slot_of[g.inputs()[i]] = program->input_slots.back();
  }
  // What host nodes and the ops' planners read: dims of every value made so
  // far, contents of constants and host values.
  PlanEnv env;
  env.dims = [&](ValueId v) -> const dims_t* {
    if (auto it = slot_of.find(v); it != slot_of.end()) return &program->slots[it->second].dims;
    const Value& val = g.value(v);
    return val.initializer ? &val.initializer->shape() : nullptr;
  };
  env.value = [&](ValueId v) -> const Tensor* {
    if (auto it = slot_of.find(v); it != slot_of.end() && program->slots[it->second].host)
      return program->slots[it->second].host.get();
    const Value& val = g.value(v);  // a constant (its device copy has a slot too)
    return val.initializer ? &*val.initializer : nullptr;
  };
  // The slot a device op reads `v` from; a host value gets its device copy here.
  auto slot_for = [&](ValueId v) -> Result<size_t> {
    if (auto it = slot_of.find(v); it != slot_of.end()) {
      Program::Slot& sl = program->slots[it->second];
      if (sl.host && !sl.constant) {
        // A bool (Where's condition) goes up as 0/1 floats; the slot keeps
        // its host tensor, so a block output reads the bools themselves.
        const bool bools = sl.host->dtype() == DType::kBool;
        const Tensor as_f32 = bools ? bools_as_floats(*sl.host) : Tensor();
        const Tensor& up = bools ? as_f32 : *sl.host;
        HONE_TRY(DeviceBuffer buf, DeviceBuffer::upload(d_, up.raw(), up.nbytes()));
        sl.constant = true;
        sl.cptr = buf.ptr();
        program->uploads.push_back(std::move(buf));
      }
      return it->second;
    }
    auto c = constants_.find(v);
    if (c == constants_.end())
      return fail(ErrorCode::kInternal,
                  "value '" + g.value(v).name + "' is read before it is made");
    const Tensor& t = *g.value(v).initializer;
    const auto h = half_constants_.find(v);
    // A bool constant is 0/1 floats on the device (cuda_block.cpp): a block
    // output reads it from the host copy.
    std::shared_ptr<const Tensor> host;
    if (t.dtype() == DType::kBool) host = std::make_shared<const Tensor>(t.clone());
    program->slots.push_back({true, 0, c->second.ptr(),
                              h == half_constants_.end() ? 0 : h->second.ptr(), t.shape(),
                              t.dtype(), std::move(host)});
    return slot_of[v] = program->slots.size() - 1;
  };
  std::vector<std::string> lines;
  size_t workspace = 0;
  // Half-precision activations (storage.h): each value's storage is chosen
  // here, with conversion steps where a reader needs another.
  StoragePlan storage(*program, g, settings_.math.half, lines);
  std::map<size_t, ops::CountedOutput> counted;  // slot -> its OpPlan::counted
  for (const Unit& u : units_) {
    Program::Step st;
    if (half_acts)
      HONE_CHECK_OK(storage.plan_step(st, u, slot_for, env));
    else
      HONE_CHECK_OK(plan_unit_step(st, u, slot_for, program->slots, env));
    st.label = u.label;
    for (size_t in : st.in)
      if (counted.contains(in))
        return fail(ErrorCode::kUnsupported,
                    u.label +
                        " reads the output of a NonZero or NonMaxSuppression in its block (its "
                        "length is known only once it has run; the block ends there)");
    for (size_t i = 0; i < st.in.size(); ++i)
      if (program->slots[st.in[i]].dims_only && st.op.run)
        return fail(ErrorCode::kInternal,
                    u.label + " reads '" + g.value(u.inputs[i]).name +
                        "', which an attention unit reads in place (only its dims are known)");
    if (st.op.dims_only) {
      // Dims for the Shape nodes that read them; the attention unit reads the
      // chain's source through strides.
      for (size_t o = 0; o < u.outputs.size(); ++o) {
        program->slots.push_back({false, 0, 0, 0, st.op.outputs[o], DType::kF32, nullptr});
        program->slots.back().dims_only = true;
        st.out.push_back(program->slots.size() - 1);
        slot_of[u.outputs[o]] = program->slots.size() - 1;
      }
      lines.push_back(u.label + " [" + st.op.kernel + "]");
      program->steps.push_back(std::move(st));
      continue;
    }
    for (size_t o = 0; o < u.outputs.size(); ++o) {
      const dims_t& od = st.op.outputs[o];
      size_t s;
      if (o < st.op.host.size() && st.op.host[o]) {
        // A host value: no device memory until a device op reads it.
        program->slots.push_back({false, 0, 0, 0, od, st.op.host[o]->dtype(), st.op.host[o]});
        s = program->slots.size() - 1;
      } else if (numel_of(od) == 0) {
        return fail(ErrorCode::kUnsupported, u.label + " makes an empty tensor");
      } else if (o < st.op.alias.size() && st.op.alias[o] >= 0) {
        Program::Slot view = program->slots[st.in[static_cast<size_t>(st.op.alias[o])]];
        const int64_t off = o < st.op.alias_offset.size() ? st.op.alias_offset[o] : 0;
        const size_t bytes = static_cast<size_t>(off) * dtype_size(view.dtype);
        if (view.constant)
          view.cptr += bytes;
        else
          view.offset += bytes;
        view.dims = od;
        view.host = nullptr;
        view.half = 0;
        program->slots.push_back(view);
        s = program->slots.size() - 1;
      } else if (half_acts) {
        s = storage.output_slot(st.op, o);
      } else {
        s = new_slot(od, o < st.op.dtypes.size() ? st.op.dtypes[o] : DType::kF32);
      }
      if (half_acts) storage.note(s, g.value(u.outputs[o]).name);
      if (st.op.counted && st.op.counted->output == o) counted[s] = *st.op.counted;
      st.out.push_back(s);
      slot_of[u.outputs[o]] = s;
    }
    workspace = std::max(workspace, st.op.workspace_bytes);
    program->launches += st.op.run ? 1 : 0;
    if (st.op.run || !st.op.kernel.empty()) lines.push_back(u.label + " [" + st.op.kernel + "]");
    program->steps.push_back(std::move(st));
  }
  for (ValueId v : g.outputs()) {
    size_t s = 0;
    if (auto it = slot_of.find(v); it != slot_of.end()) {
      s = it->second;
    } else {
      HONE_TRY(s, slot_for(v));
    }
    // Outputs leave as f32: a half one is converted by a last step.
    if (half_acts && program->slots[s].storage == Storage::kHalf) {
      storage.note(s, g.value(v).name);
      HONE_TRY(s, storage.as(s, Storage::kF32, "block output"));
    }
    if (auto it = counted.find(s); it != counted.end()) {
      program->counted_outputs.push_back(it->second);
      program->counted_outputs.back().output = program->output_slots.size();
    }
    program->output_slots.push_back(s);
  }
  // Steps run one after another on one stream, so they share one workspace.
  program->workspace_offset = program->arena_bytes;
  program->arena_bytes += round256(workspace);
  const bool any_half =
      std::any_of(program->slots.begin(), program->slots.end(),
                  [](const Program::Slot& sl) { return sl.storage == Storage::kHalf; });
  HONE_LOG_DEBUG(
      "cuda: block '{}' for {} ({} activations): {} steps, {} bytes of device arena, {} host "
      "values uploaded",
      g.name(), signature_text(sig), half_acts ? "half" : "f32", program->steps.size(),
      program->arena_bytes, program->uploads.size());
  return Built{std::shared_ptr<const Program>(std::move(program)), std::move(lines), any_half};
}

}  // namespace hone::cuda
