// Liveness-based arena layout for one compiled block: every temporary
// value and every step's scratch space gets an offset in one arena, so values
// whose lifetimes do not overlap share bytes, and an element-wise step may
// write its output over an input that dies there (in place).
//
//   ArenaProblem p;  p.values = {{4096}, {4096}, {4096}};
//   p.steps = {{.reads = {}, .writes = {0}}, {.reads = {0}, .writes = {1}, .in_place = {{0, 1}}},
//   ...}; HONE_TRY(ArenaLayout m, lay_out(p));   // m.offsets, m.arena_bytes vs m.naive_bytes
//
// Lifetimes are inclusive step ranges: a value lives from the step that
// writes it to the last step that reads it, so a step's inputs and outputs
// never share bytes unless the caller declared the pair in place. External
// values (block inputs, constants, outputs, anything that outlives the block)
// have their own buffers and take no arena space. Placement is greedy by
// size with best fit among the gaps left by already-placed buffers whose
// lifetimes overlap (the arena planner of TFLite works the same way); it is
// deterministic: the same problem gives the same offsets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "hone/error.h"

namespace hone {

struct ArenaValue {
  size_t bytes = 0;
  /// Lives outside the arena (block input, constant, output, or a value that
  /// outlives the block): never placed, never shared, never written in place.
  bool external = false;
};

struct ArenaStep {
  std::vector<int> reads;   // value indices
  std::vector<int> writes;  // value indices; each value is written by one step
  /// Bytes this step needs only while it runs (its workspace).
  size_t scratch_bytes = 0;
  /// (read, write) pairs where the step tolerates `write` occupying the bytes
  /// of `read` (an element-wise kernel reads each element before writing
  /// it). Taken only when safe: both in the arena, the same size, and `read`
  /// read by no later step; the first safe pair per written value wins.
  std::vector<std::pair<int, int>> in_place;
};

struct ArenaProblem {
  std::vector<ArenaValue> values;
  std::vector<ArenaStep> steps;
  size_t alignment = 64;  // every offset and size is rounded up to this
};

struct ArenaLayout {
  static constexpr size_t kNotPlaced = SIZE_MAX;
  /// Per value: its offset in the arena; kNotPlaced for external values and
  /// values no step writes.
  std::vector<size_t> offsets;
  /// Per step: the offset of its scratch space (kNotPlaced when it has none).
  std::vector<size_t> scratch_offsets;
  /// Per value: the value whose bytes it took over in place, or -1.
  std::vector<int> in_place_of;
  /// Per value: the inclusive [first, last] step range it is live; (-1, -1)
  /// for values no step writes.
  std::vector<std::pair<int, int>> lifetimes;
  /// The arena one run needs: the peak activation bytes of this layout.
  size_t arena_bytes = 0;
  /// One buffer per arena value and per step's scratch: what sharing saves against.
  size_t naive_bytes = 0;
  /// The most bytes live during one step: no placement can need less.
  size_t live_bytes = 0;
  /// Values written in place.
  int in_place_count = 0;

  /// "arena 1.2 MiB (naive 3.4 MiB, live 1.1 MiB), 3 in place".
  std::string describe() const;
};

/// Lays `p` out. kInvalidArgument naming the step and value when a value index
/// is out of range, a value is written twice, an arena value is read before
/// any step writes it, or an in-place pair names a value the step does not
/// read or write.
[[nodiscard]] Result<ArenaLayout> lay_out(const ArenaProblem& p);

}  // namespace hone
