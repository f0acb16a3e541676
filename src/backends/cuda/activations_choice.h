// Private to the cuda backend: the pure part of the `activations` setting
// under precision=bf16/fp16. f32 and half force a block's storage (storage.h);
// auto (the default) builds each block's Program both ways for each input
// signature, times both on the device (CudaBlock::build_auto,
// activations_auto.cpp) and keeps the faster, recording the choice in
// kernel_choices (kernel_choices.h) as
//   block 'NAME' from 'FIRST' (OP) activations|SHAPES|MODE=half   (or =f32)
// so that a package replays it without timing. No device is needed here.
//
//   HONE_TRY(ActivationsMode m, parse_activations(config_value));
//   HONE_CHECK_OK(check_activations_entries(entries));   // "=x" is an error naming it
//   const std::string label = activations_label(block_graph);
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "backends/cuda/kernel_choices.h"
#include "hone/graph.h"

namespace hone::cuda {

/// The `activations` setting.
enum class ActivationsMode {
  kF32,   // tensors between steps stay f32
  kHalf,  // bf16/f16 storage wherever a reader has a half kernel (storage.h)
  kAuto,  // per block and input signature, the faster of the two, by timing
};

/// "f32", "half" or "auto"; kInvalidArgument naming the value otherwise.
[[nodiscard]] Result<ActivationsMode> parse_activations(const std::string& value);

/// The kernel_choices label of `block`'s choice: "block 'NAME' from 'FIRST'
/// (OP) activations", FIRST its first node (block graphs of one model share
/// their NAME; their first nodes differ).
std::string activations_label(const Graph& block);
/// Whether `label` is one activations_label() makes.
bool is_activations_label(const std::string& label);

/// The storage a recorded activations entry names: true for "half", false
/// for "f32"; kInvalidArgument naming the entry for anything else.
[[nodiscard]] Result<bool> recorded_half(const KernelChoices::Entry& e);
/// Every activations entry of `entries` names half or f32 (recorded_half).
[[nodiscard]] Result<void> check_activations_entries(const KernelChoices::Entries& entries);

/// The median of `ms` (the mean of the middle two for an even count); 0 for none.
double median_ms(std::vector<double> ms);

/// How a block's storage was settled under activations=auto.
struct ActivationsDecision {
  enum class How {
    kTimed,       // both Programs timed here
    kReused,      // this process timed the same two plans before
    kReplayed,    // taken from kernel_choices, nothing timed
    kOnlyF32,     // no value of the half plan was half: only the f32 one built
    kHalfFailed,  // the half Program failed to build or to run: f32 kept (the log says why)
  };
  bool half = false;
  How how = How::kTimed;
  double half_ms = 0, f32_ms = 0;  // kTimed and kReused
};
/// Half only when it timed strictly faster: a tie keeps f32 (fewer
/// conversions, f32 rounding between steps).
bool half_wins(double half_ms, double f32_ms);
/// The kernel plan's line for a decision: "WHAT: half (bf16), timed: half
/// 2.340 ms, f32 4.510 ms" (`what` the label and shapes, `half_type` "bf16"
/// or "f16").
std::string activations_line(const std::string& what, const ActivationsDecision& d,
                             const std::string& half_type);

}  // namespace hone::cuda
