// Private to the cuda backend: the record of the kernels chosen by timing at
// plan time (op_timer.h's fastest(), gemm.cpp's pick(), ops_conv.cpp's
// cuDNN-or-cuBLAS and cuDNN algorithm choices), one per backend instance, kept
// in the backend's config field `kernel_choices` so that a package replays
// them without timing (STYLE.md rule 9).
//
//   auto rec = std::make_shared<KernelChoices>(*KernelChoices::parse(text));
//   if (auto i = rec->replay(key, kernels, label)) return cands[*i];   // no timing
//   rec->record(key, cands[best].kernel, KernelChoices::How::kTimed);
//
// Text format: entries sorted by key, ';'-separated, "-" for none:
//   LABEL|SHAPES|MODE=KERNEL
// LABEL is the unit's label ("'fc' (MatMul)+Add"), SHAPES its input dims
// ("[8,64][64,32][32]"), MODE the precision (fp32, tf32, bf16, fp16, fp8), KERNEL
// the chosen OpPlan::kernel. In LABEL and KERNEL the characters % ; = | and
// control characters are written as %XX (hex). A cuDNN algorithm choice is
// the entry of LABEL + " cudnn-find" with KERNEL "cudnn[algo A, math M]" (f32
// NCHW), or of LABEL + " cudnn-find-nhwc" with "cudnn_nhwc[algo A, math M]"
// (bf16/f16 NHWC, ops_conv.cpp). The text's syntax is shared with onednn's
// timed_choices (backends/common/choice_text.h).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "backends/common/choice_text.h"
#include "hone/error.h"

namespace hone::cuda {

/// How the selections of one backend instance were made.
struct ChoiceCounts {
  uint64_t timed = 0;     // candidates timed on the device here
  uint64_t replayed = 0;  // taken from kernel_choices (the config's, or recorded earlier here)
  uint64_t reused = 0;    // taken from an earlier timing in this process by another backend
};

class KernelChoices {
 public:
  enum class How { kTimed, kReplayed, kReused };
  using Entry = ChoiceEntry;      // label, shapes, mode, kernel
  using Entries = ChoiceEntries;  // by key()

  /// Entries of a `kernel_choices` value ("" and "-": none). kInvalidArgument
  /// naming the field and the bad entry when malformed, or a key twice.
  [[nodiscard]] static Result<Entries> parse(const std::string& text);
  /// The text of `entries`, sorted by key; "-" when empty (so a recorded
  /// nothing differs from the default "", nothing recorded yet).
  static std::string format(const Entries& entries);
  /// The key of one selection: escaped label, shapes, mode.
  static std::string key(const std::string& label, const std::vector<std::vector<int64_t>>& in,
                         const std::string& mode);
  /// %XX-escapes % ; = | and control characters.
  static std::string escape(const std::string& s);

  KernelChoices() = default;
  explicit KernelChoices(Entries given) : entries_(std::move(given)) {}
  /// A layer over `parent` (not null): every read, write and count passes
  /// through to it, except during a trial.
  explicit KernelChoices(std::shared_ptr<KernelChoices> parent) : parent_(std::move(parent)) {}

  /// What a trial recorded and counted.
  struct Trial {
    Entries entries;
    ChoiceCounts counts;
  };
  /// From now until end_trial(), record() and every count stay in the trial;
  /// replay() and find() see its entries first, then the parent's (or this
  /// record's own). One trial at a time, on the thread that plans.
  void begin_trial();
  /// Ends the trial and returns what it recorded and counted (dropped here).
  Trial end_trial();
  /// Adds a trial's entries and counts to the parent (or to this record) as
  /// if they had been recorded there.
  void commit(const Trial& trial);

  /// Called with the new text, under this record's lock, whenever an entry is
  /// added or changed (the backend writes it into its config).
  void on_change(std::function<void(const std::string&)> fn) { on_change_ = std::move(fn); }

  /// The index in `kernels` (one selection's candidates, in order) of the
  /// kernel recorded for `key`, counted as replayed and logged (debug); none
  /// when nothing is recorded, or when the recorded kernel is not among
  /// `kernels` on this machine: then a warning names `label` and the kernel,
  /// and the caller times the candidates.
  std::optional<size_t> replay(const std::string& key, const std::vector<std::string>& kernels,
                               const std::string& label);
  /// Records `kernel` as the choice for `key` (made with `label`, `shapes` and
  /// `mode`, see key()); counts it by `how`.
  void record(const std::string& label, const std::vector<std::vector<int64_t>>& in,
              const std::string& mode, const std::string& kernel, How how);
  /// The recorded kernel for `key`, if any (no counting, no logging).
  std::optional<std::string> find(const std::string& key) const;
  /// Counts a replay made by the caller from find()'s answer.
  void count_replayed();

  std::string text() const;
  ChoiceCounts counts() const;
  /// "choice: LABEL SHAPES MODE -> KERNEL", one per entry, sorted by key.
  std::vector<std::string> lines() const;

 private:
  bool in_trial() const;
  /// The entry of `key`: the trial's, else the parent's or this record's.
  std::optional<Entry> entry(const std::string& key) const;

  mutable std::mutex mu_;
  Entries entries_;
  ChoiceCounts counts_;
  std::function<void(const std::string&)> on_change_;
  std::shared_ptr<KernelChoices> parent_;
  std::optional<Trial> trial_;
};

/// "[8,64][64,32]": input dims as they appear in keys.
std::string shapes_text(const std::vector<std::vector<int64_t>>& in);

}  // namespace hone::cuda
