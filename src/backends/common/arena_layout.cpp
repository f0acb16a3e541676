#include "backends/common/arena_layout.h"

#include <algorithm>
#include <cstdio>

namespace hone {
namespace {

std::string bytes_text(size_t b) {
  char buf[32];
  if (b < 1024) {
    std::snprintf(buf, sizeof buf, "%zu B", b);
  } else if (b < 1024 * 1024) {
    std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(b) / 1024.0);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(b) / (1024.0 * 1024.0));
  }
  return buf;
}

/// One range of arena bytes: a value with every value that took it over in
/// place, or one step's scratch.
struct Buffer {
  size_t bytes = 0;
  int first = 0, last = 0;  // inclusive step range
  int id = 0;               // value index, or -(step + 1) for scratch
  size_t offset = 0;
};

bool overlaps(const Buffer& a, const Buffer& b) {
  return a.first <= b.last && b.first <= a.last;
}

Result<void> check_value(const ArenaProblem& p, int v, size_t step, const char* what) {
  if (v < 0 || static_cast<size_t>(v) >= p.values.size())
    return fail(ErrorCode::kInvalidArgument,
                "arena layout: step " + std::to_string(step) + " " + what + " value " +
                    std::to_string(v) + ", but there are " + std::to_string(p.values.size()));
  return {};
}

}  // namespace

std::string ArenaLayout::describe() const {
  return "arena " + bytes_text(arena_bytes) + " (naive " + bytes_text(naive_bytes) + ", live " +
         bytes_text(live_bytes) + "), " + std::to_string(in_place_count) + " in place";
}

Result<ArenaLayout> lay_out(const ArenaProblem& p) {
  const size_t nv = p.values.size(), ns = p.steps.size();
  if (p.alignment == 0 || (p.alignment & (p.alignment - 1)) != 0)
    return fail(
        ErrorCode::kInvalidArgument,
        "arena layout: alignment " + std::to_string(p.alignment) + " is not a power of two");
  auto align = [&](size_t b) { return (b + p.alignment - 1) / p.alignment * p.alignment; };

  std::vector<int> writer(nv, -1), last_read(nv, -1);
  for (size_t s = 0; s < ns; ++s) {
    const ArenaStep& st = p.steps[s];
    for (int v : st.writes) {
      HONE_CHECK_OK(check_value(p, v, s, "writes"));
      if (writer[static_cast<size_t>(v)] >= 0)
        return fail(ErrorCode::kInvalidArgument,
                    "arena layout: value " + std::to_string(v) + " is written by step " +
                        std::to_string(writer[static_cast<size_t>(v)]) + " and again by step " +
                        std::to_string(s));
      writer[static_cast<size_t>(v)] = static_cast<int>(s);
    }
  }
  for (size_t s = 0; s < ns; ++s)
    for (int v : p.steps[s].reads) {
      HONE_CHECK_OK(check_value(p, v, s, "reads"));
      const size_t u = static_cast<size_t>(v);
      if (!p.values[u].external && (writer[u] < 0 || writer[u] >= static_cast<int>(s)))
        return fail(ErrorCode::kInvalidArgument, "arena layout: step " + std::to_string(s) +
                                                     " reads value " + std::to_string(v) +
                                                     " before any step writes it");
      last_read[u] = std::max(last_read[u], static_cast<int>(s));
    }

  ArenaLayout layout;
  layout.offsets.assign(nv, ArenaLayout::kNotPlaced);
  layout.scratch_offsets.assign(ns, ArenaLayout::kNotPlaced);
  layout.in_place_of.assign(nv, -1);
  layout.lifetimes.assign(nv, {-1, -1});
  for (size_t v = 0; v < nv; ++v)
    if (writer[v] >= 0) layout.lifetimes[v] = {writer[v], std::max(writer[v], last_read[v])};

  // In-place groups: root[v] is the value whose buffer v lives in.
  std::vector<int> root(nv);
  for (size_t v = 0; v < nv; ++v) root[v] = static_cast<int>(v);
  std::vector<bool> handed_on(nv, false);  // its bytes already went to a later value
  for (size_t s = 0; s < ns; ++s) {
    const ArenaStep& st = p.steps[s];
    for (const auto& [r, w] : st.in_place) {
      HONE_CHECK_OK(check_value(p, r, s, "declares in place over"));
      HONE_CHECK_OK(check_value(p, w, s, "declares in place the"));
      if (std::find(st.reads.begin(), st.reads.end(), r) == st.reads.end() ||
          std::find(st.writes.begin(), st.writes.end(), w) == st.writes.end())
        return fail(ErrorCode::kInvalidArgument,
                    "arena layout: step " + std::to_string(s) + " declares value " +
                        std::to_string(w) + " in place over value " + std::to_string(r) +
                        ", but it does not read the first and write the second");
      const size_t ur = static_cast<size_t>(r), uw = static_cast<size_t>(w);
      const bool safe = !p.values[ur].external && !p.values[uw].external &&
                        p.values[ur].bytes == p.values[uw].bytes &&
                        last_read[ur] == static_cast<int>(s) && !handed_on[ur] &&
                        layout.in_place_of[uw] < 0;
      if (!safe) continue;
      handed_on[ur] = true;
      layout.in_place_of[uw] = r;
      root[uw] = root[ur];
      ++layout.in_place_count;
    }
  }

  // Buffers: one per group root, extended over its members, then scratch.
  std::vector<Buffer> buffers;
  std::vector<int> buffer_of(nv, -1);
  for (size_t v = 0; v < nv; ++v) {
    if (p.values[v].external || writer[v] < 0) continue;
    layout.naive_bytes += align(p.values[v].bytes);
    const size_t r = static_cast<size_t>(root[v]);
    if (buffer_of[r] < 0) {
      buffer_of[r] = static_cast<int>(buffers.size());
      buffers.push_back({align(p.values[r].bytes), layout.lifetimes[r].first,
                         layout.lifetimes[r].second, static_cast<int>(r), 0});
    }
    Buffer& b = buffers[static_cast<size_t>(buffer_of[r])];
    b.last = std::max(b.last, layout.lifetimes[v].second);
    buffer_of[v] = buffer_of[r];
  }
  for (size_t s = 0; s < ns; ++s)
    if (p.steps[s].scratch_bytes > 0) {
      const size_t b = align(p.steps[s].scratch_bytes);
      layout.naive_bytes += b;
      buffers.push_back({b, static_cast<int>(s), static_cast<int>(s), -static_cast<int>(s) - 1, 0});
    }

  for (size_t s = 0; s < ns; ++s) {
    size_t live = 0;
    for (const Buffer& b : buffers)
      if (b.first <= static_cast<int>(s) && static_cast<int>(s) <= b.last) live += b.bytes;
    layout.live_bytes = std::max(layout.live_bytes, live);
  }

  // Greedy by size: the largest buffers choose first, each taking the
  // smallest gap that fits among the buffers already placed that are live at
  // the same time (the lowest such gap on ties), else the end.
  std::vector<size_t> order(buffers.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const Buffer &x = buffers[a], &y = buffers[b];
    if (x.bytes != y.bytes) return x.bytes > y.bytes;
    if (x.first != y.first) return x.first < y.first;
    return a < b;
  });
  std::vector<size_t> placed;
  for (size_t i : order) {
    Buffer& b = buffers[i];
    std::vector<const Buffer*> near;
    for (size_t j : placed)
      if (overlaps(b, buffers[j])) near.push_back(&buffers[j]);
    std::sort(near.begin(), near.end(), [](const Buffer* x, const Buffer* y) {
      return x->offset != y->offset ? x->offset < y->offset : x->id < y->id;
    });
    size_t cursor = 0, best = ArenaLayout::kNotPlaced, best_gap = ArenaLayout::kNotPlaced;
    for (const Buffer* o : near) {
      if (o->offset > cursor) {
        const size_t gap = o->offset - cursor;
        if (gap >= b.bytes && gap < best_gap) {
          best = cursor;
          best_gap = gap;
        }
      }
      cursor = std::max(cursor, o->offset + o->bytes);
    }
    b.offset = best != ArenaLayout::kNotPlaced ? best : cursor;
    layout.arena_bytes = std::max(layout.arena_bytes, b.offset + b.bytes);
    placed.push_back(i);
  }

  for (size_t v = 0; v < nv; ++v)
    if (buffer_of[v] >= 0) layout.offsets[v] = buffers[static_cast<size_t>(buffer_of[v])].offset;
  for (const Buffer& b : buffers)
    if (b.id < 0) layout.scratch_offsets[static_cast<size_t>(-b.id - 1)] = b.offset;
  return layout;
}

}  // namespace hone
