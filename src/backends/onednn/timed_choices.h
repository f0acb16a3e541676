// Private to the onednn backend: the record of the choices its plans make by
// timing (STYLE.md rule 9), one per backend instance, kept in the config
// field `timed_choices` so that a package replays them without timing, and
// so gives the same kernels, hence the same bits, as the tuned run.
//
//   TimedChoices rec(*TimedChoices::parse(text));
//   const std::string pick = rec.choose(label, dims, "fp32", {"direct", "winograd"},
//                                       [&] { return std::vector<double>{t_direct(), t_wino()}; });
//
// Text: choice_text.h's LABEL|SHAPES|MODE=CHOICE (';'-separated, '-' for
// none), MODE fp32 or bf16. A LABEL's last word is its decision's kind, one
// of kinds(); a node's label also says which of the block's two plans it was
// lowered in ("'c1' (Conv) [nChw16c plan] winograd", "[any plan]"), a
// block's names the block ("block 'NAME' from 'c1' (Conv) block-plan"). The
// CHOICE is one of its kind's choices_of(), the default (untimed) one first.
// Thread-safe: blocks with symbolic dims are planned at their first run of
// a shape, on whichever thread runs it.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "backends/common/choice_text.h"
#include "hone/error.h"

namespace hone::onednn {

/// How the choices of one backend instance were settled.
struct ChoiceCounts {
  uint64_t timed = 0;     // decisions timed here (their choice then recorded)
  uint64_t replayed = 0;  // decisions taken from the record, nothing timed
  uint64_t refused = 0;   // recorded choices this machine could not run (warned, then timed)
};

class TimedChoices {
 public:
  /// The decision kinds: "winograd", "fusion", "layout", "deconv-layout",
  /// "rnn-layout", "block-plan".
  static const std::vector<std::string>& kinds();
  /// The choices of `kind`, its default (what an untimed tie keeps) first;
  /// empty for an unknown kind.
  static const std::vector<std::string>& choices_of(const std::string& kind);
  /// The kind a label ends in ("" when none).
  static std::string kind_of(const std::string& label);

  /// Entries of a `timed_choices` value ("" and "-": none). kInvalidArgument
  /// naming the field and the bad entry when malformed, when its label names
  /// no kind, or its choice is not one of its kind's.
  [[nodiscard]] static Result<ChoiceEntries> parse(const std::string& text);

  TimedChoices() = default;
  explicit TimedChoices(ChoiceEntries given) : entries_(std::move(given)) {}

  /// Called with the new text, under this record's lock, whenever an entry
  /// is added or changed (the backend writes it into its config).
  void on_change(std::function<void(const std::string&)> fn) { on_change_ = std::move(fn); }

  /// Settles one decision among `runnable` (the choices that can run here,
  /// the default first): the recorded choice when it is among them (no
  /// timing); else, when more than one can run, the one `time()` (ms per
  /// runnable choice, in order) finds fastest, a later one only when strictly
  /// faster, which is then recorded; else the only one (not recorded). A
  /// recorded choice that cannot run here is warned about, naming the entry,
  /// and the decision is timed as if none were recorded.
  std::string choose(const std::string& label, const std::vector<std::vector<int64_t>>& in,
                     const std::string& mode, const std::vector<std::string>& runnable,
                     const std::function<std::vector<double>()>& time);

  /// The choice recorded for a decision, if any (not counted: the caller
  /// then settles it with choose(), given what it could build).
  std::optional<std::string> recorded(const std::string& label,
                                      const std::vector<std::vector<int64_t>>& in,
                                      const std::string& mode) const;

  std::string text() const;
  ChoiceCounts counts() const;
  /// "choice: LABEL SHAPES MODE -> CHOICE", one per entry, sorted by key.
  std::vector<std::string> lines() const;

 private:
  mutable std::mutex mu_;
  ChoiceEntries entries_;
  ChoiceCounts counts_;
  std::function<void(const std::string&)> on_change_;
};

}  // namespace hone::onednn
