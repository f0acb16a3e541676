// The text of a backend's record of choices made by timing (STYLE.md rule 9),
// kept in a config field so that a package replays them without timing:
// cuda's `kernel_choices` (backends/cuda/kernel_choices.h) and onednn's
// `timed_choices` (backends/onednn/timed_choices.h) share it. Entries sorted
// by key, ';'-separated, "-" for none:
//   LABEL|SHAPES|MODE=CHOICE
// LABEL names the decision point, SHAPES its input dims ("[8,64][64,32]",
// "[]" for a scalar), MODE the precision it was made under; in LABEL and
// CHOICE the characters % ; = | and control characters are written as %XX.
//
//   const ChoiceSyntax syntax{"onednn timed_choices", "choice", "fp32 or bf16", valid};
//   HONE_TRY(ChoiceEntries given, parse_choice_text(text, syntax));
//   format_choice_text(given) == text;   // for a text in canonical order
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "hone/error.h"

namespace hone {

/// One recorded choice. `kernel` is the choice made (a kernel id for cuda,
/// a form such as "winograd" or "nChw16c" for onednn).
struct ChoiceEntry {
  std::string label, shapes, mode, kernel;
};
/// By choice_key().
using ChoiceEntries = std::map<std::string, ChoiceEntry>;

/// What one backend's field accepts, and how its errors read.
struct ChoiceSyntax {
  std::string field;   // "cuda kernel_choices": errors say "<field> entry '...': ..."
  std::string choice;  // the word for CHOICE in messages: "kernel", "choice"
  std::string modes;   // the valid modes as a message lists them: "fp32 or bf16"
  bool (*valid_mode)(const std::string& mode) = nullptr;
};

/// Entries of a field's value ("" and "-": none). kInvalidArgument naming
/// `syntax.field` and the bad entry when one is malformed or a key is given
/// twice (also as "%3b" and "%3B").
[[nodiscard]] Result<ChoiceEntries> parse_choice_text(const std::string& text,
                                                      const ChoiceSyntax& syntax);
/// The text of `entries`, sorted by key; "-" when empty (so a recorded
/// nothing differs from the default "", nothing recorded yet).
std::string format_choice_text(const ChoiceEntries& entries);
/// One "choice: LABEL SHAPES MODE -> CHOICE" line per entry, by key: how a
/// record is shown in a kernel plan.
std::vector<std::string> choice_lines(const ChoiceEntries& entries);
/// The key of one decision: escaped label, shapes, mode.
std::string choice_key(const std::string& label, const std::vector<std::vector<int64_t>>& in,
                       const std::string& mode);
/// The key of an entry, as choice_key() makes it.
std::string choice_key(const ChoiceEntry& e);
/// The entry as it is written: "KEY=CHOICE".
std::string choice_entry_text(const ChoiceEntry& e);
/// %XX-escapes % ; = | and control characters.
std::string escape_choice_text(const std::string& s);
/// "[8,64][64,32]": input dims as they appear in keys.
std::string choice_shapes_text(const std::vector<std::vector<int64_t>>& in);

}  // namespace hone
