// Where a plan's temporaries live: slices of one temporary (a Concat whose
// sources are written straight into their part of its output, lower_shape.cpp)
// and the arena placement of the roots by liveness (common/arena_layout.h).
#include <algorithm>

#include "backends/common/arena_layout.h"
#include "backends/onednn/plan.h"

namespace hone::onednn {

int PlanBuilder::root_of(int buf, size_t* offset) const {
  size_t off = 0;
  const Buffer* b = &plan_->buffers[static_cast<size_t>(buf)];
  if (b->kind != Buffer::Kind::kTemp) return -1;
  while (b->parent >= 0) {
    off += b->parent_offset;
    buf = b->parent;
    b = &plan_->buffers[static_cast<size_t>(buf)];
  }
  if (offset != nullptr) *offset = off;
  return buf;
}

size_t PlanBuilder::buffer_size(int buf) const {
  return plan_->buffers[static_cast<size_t>(buf)].size;
}

void PlanBuilder::place_in(int buf, int parent, size_t offset) {
  Buffer& b = plan_->buffers[static_cast<size_t>(buf)];
  b.parent = parent;
  b.parent_offset = offset;
  b.sliced = true;
  plan_->buffers[static_cast<size_t>(parent)].sliced = true;
}

int PlanBuilder::new_slice(int parent, size_t offset, const md_t& md) {
  const int buf = new_temp(md);
  place_in(buf, parent, offset);
  return buf;
}

namespace {

/// The arguments a primitive writes: its destinations (DST_LAYER, DST_ITER
/// and DST_ITER_C of RNNs included) and its workspace. Every other argument
/// is read.
bool is_written_arg(int arg) {
  return arg == DNNL_ARG_DST_0 || arg == DNNL_ARG_DST_1 || arg == DNNL_ARG_DST_2 ||
         arg == DNNL_ARG_WORKSPACE ||
         (arg >= DNNL_ARG_MULTIPLE_DST && arg < DNNL_ARG_MULTIPLE_DST + 1024);
}

}  // namespace

Result<void> PlanBuilder::place_temps() {
  // Arena values are the root temporaries; a slice reads and writes its root.
  std::vector<int> value_of(plan_->buffers.size(), -1);  // buffer -> arena value
  ArenaProblem p;
  for (size_t i = 0; i < plan_->buffers.size(); ++i)
    if (plan_->buffers[i].kind == Buffer::Kind::kTemp && plan_->buffers[i].parent < 0) {
      value_of[i] = static_cast<int>(p.values.size());
      p.values.push_back({plan_->buffers[i].size, false});
    }
  for (size_t i = 0; i < plan_->buffers.size(); ++i)
    if (plan_->buffers[i].parent >= 0)
      value_of[i] = value_of[static_cast<size_t>(root_of(static_cast<int>(i), nullptr))];
  std::vector<bool> written(p.values.size(), false);
  for (const Step& s : plan_->steps) {
    ArenaStep ms;
    // A buffer written again (a second writer of part of it) is live from
    // its first writer on: later writes count as reads that keep it alive.
    for (const auto& [arg, ref] : s.args) {
      const int v = value_of[static_cast<size_t>(ref.buffer)];
      if (v < 0) continue;
      if (is_written_arg(arg) && !written[static_cast<size_t>(v)]) {
        if (std::find(ms.writes.begin(), ms.writes.end(), v) == ms.writes.end())
          ms.writes.push_back(v);
      } else if (std::find(ms.reads.begin(), ms.reads.end(), v) == ms.reads.end()) {
        ms.reads.push_back(v);
      }
    }
    // A step that reads and first-writes one buffer (not expected) keeps it
    // a write only, as the read sees what the step itself writes.
    std::erase_if(ms.reads, [&](int v) {
      return std::find(ms.writes.begin(), ms.writes.end(), v) != ms.writes.end();
    });
    for (int v : ms.writes) written[static_cast<size_t>(v)] = true;
    // oneDNN's element-wise and binary primitives may write over their
    // (first) source when both have one layout; a slice or a sliced
    // temporary is part of a larger value and is never written over.
    const bool eltwise = s.kind.starts_with("eltwise"), binary = s.kind.starts_with("binary");
    if (eltwise || binary) {
      const int src_arg = eltwise ? DNNL_ARG_SRC : DNNL_ARG_SRC_0;
      const BufferRef *src = nullptr, *dst = nullptr;
      for (const auto& [arg, ref] : s.args) {
        if (arg == src_arg) src = &ref;
        if (arg == DNNL_ARG_DST) dst = &ref;
      }
      if (src != nullptr && dst != nullptr && src->md == dst->md &&
          !plan_->buffers[static_cast<size_t>(src->buffer)].sliced &&
          !plan_->buffers[static_cast<size_t>(dst->buffer)].sliced) {
        const int r = value_of[static_cast<size_t>(src->buffer)];
        const int w = value_of[static_cast<size_t>(dst->buffer)];
        if (r >= 0 && w >= 0 && r != w &&
            std::find(ms.writes.begin(), ms.writes.end(), w) != ms.writes.end())
          ms.in_place.push_back({r, w});
      }
    }
    p.steps.push_back(std::move(ms));
  }
  HONE_TRY(ArenaLayout m, lay_out(p));
  for (size_t i = 0; i < plan_->buffers.size(); ++i) {
    const int v = value_of[i];
    if (v < 0) continue;
    size_t in_root = 0;
    root_of(static_cast<int>(i), &in_root);
    const size_t off = m.offsets[static_cast<size_t>(v)];
    // A temporary no step writes is never read either (lay_out refuses
    // reads before writes); it keeps offset 0 and takes no room.
    plan_->buffers[i].offset = off == ArenaLayout::kNotPlaced ? 0 : off + in_root;
  }
  plan_->arena_bytes = m.arena_bytes;
  plan_->arena = m.describe();
  return {};
}

}  // namespace hone::onednn
