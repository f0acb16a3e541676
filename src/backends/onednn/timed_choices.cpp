#include "backends/onednn/timed_choices.h"

#include <algorithm>
#include <map>

#include "core/log.h"

namespace hone::onednn {

namespace {

bool valid_mode(const std::string& m) {
  return m == "fp32" || m == "bf16";
}

const ChoiceSyntax& syntax() {
  static const ChoiceSyntax s{"onednn timed_choices", "choice", "fp32 or bf16", valid_mode};
  return s;
}

/// Per kind, its choices, the default first (lower_dense.cpp, lower_resize.cpp,
/// lower_rnn.cpp, onednn_backend.cpp say what each means).
const std::map<std::string, std::vector<std::string>>& table() {
  static const std::map<std::string, std::vector<std::string>> t = {
      {"winograd", {"direct", "winograd"}},    // a 3x3 conv's kernel
      {"fusion", {"unfused", "fused"}},        // a conv with the residual Add after it
      {"layout", {"nChw16c", "nhwc"}},         // a direct conv of an nChw16c plan
      {"deconv-layout", {"nhwc", "nChw16c"}},  // a ConvTranspose of an nChw16c plan
      {"rnn-layout", {"any", "ldigo"}},        // an RNN's weights
      {"block-plan", {"any", "nChw16c"}},      // a block's convs on oneDNN's pick or nChw16c
  };
  return t;
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

const std::vector<std::string>& TimedChoices::kinds() {
  static const std::vector<std::string> k = [] {
    std::vector<std::string> out;
    for (const auto& [kind, choices] : table()) out.push_back(kind);
    return out;
  }();
  return k;
}

const std::vector<std::string>& TimedChoices::choices_of(const std::string& kind) {
  static const std::vector<std::string> none;
  auto it = table().find(kind);
  return it == table().end() ? none : it->second;
}

std::string TimedChoices::kind_of(const std::string& label) {
  const size_t space = label.rfind(' ');
  return space == std::string::npos ? std::string() : label.substr(space + 1);
}

Result<ChoiceEntries> TimedChoices::parse(const std::string& text) {
  HONE_TRY(ChoiceEntries entries, parse_choice_text(text, syntax()));
  for (const auto& [key, e] : entries) {
    const std::string kind = kind_of(e.label);
    const std::vector<std::string>& choices = choices_of(kind);
    const std::string what = "onednn timed_choices entry '" + choice_entry_text(e) + "': ";
    if (choices.empty())
      return fail(ErrorCode::kInvalidArgument,
                  what + "its label does not end in a decision kind (" + joined(kinds()) + ")");
    if (std::find(choices.begin(), choices.end(), e.kernel) == choices.end())
      return fail(ErrorCode::kInvalidArgument, what + "a " + kind + " choice is " +
                                                   joined(choices) + ", not '" + e.kernel + "'");
  }
  return entries;
}

std::string TimedChoices::choose(const std::string& label,
                                 const std::vector<std::vector<int64_t>>& in,
                                 const std::string& mode, const std::vector<std::string>& runnable,
                                 const std::function<std::vector<double>()>& time) {
  const std::string key = choice_key(label, in, mode);
  {
    std::lock_guard lock(mu_);
    if (auto it = entries_.find(key); it != entries_.end()) {
      const std::string& recorded = it->second.kernel;
      if (std::find(runnable.begin(), runnable.end(), recorded) != runnable.end()) {
        ++counts_.replayed;
        HONE_LOG_DEBUG("onednn: {} {}: {} from timed_choices, not timed", label, it->second.shapes,
                       recorded);
        return recorded;
      }
      ++counts_.refused;
      HONE_LOG_WARN(
          "onednn: timed_choices entry '{}': {} cannot run on this machine (here: {}); {}",
          choice_entry_text(it->second), recorded, joined(runnable),
          runnable.size() > 1 ? "timing instead" : "taking " + runnable.front());
    }
  }
  if (runnable.size() < 2) return runnable.empty() ? std::string() : runnable.front();
  // Timed outside the lock: another block may be planning on another thread.
  const std::vector<double> ms = time();
  size_t best = 0;
  for (size_t i = 1; i < runnable.size() && i < ms.size(); ++i)
    if (ms[i] < ms[best]) best = i;
  std::string times;
  for (size_t i = 0; i < runnable.size() && i < ms.size(); ++i)
    times += (times.empty() ? "" : ", ") + runnable[i] + " " + std::to_string(ms[i]) + " ms";
  HONE_LOG_DEBUG("onednn: {} {}: {} (timed: {})", label, choice_shapes_text(in), runnable[best],
                 times);
  std::lock_guard lock(mu_);
  ++counts_.timed;
  ChoiceEntry e{label, choice_shapes_text(in), mode, runnable[best]};
  auto [it, added] = entries_.try_emplace(key, e);
  if (!added) {
    if (it->second.kernel == e.kernel) return runnable[best];
    it->second = std::move(e);
  }
  if (on_change_) on_change_(format_choice_text(entries_));
  return runnable[best];
}

std::optional<std::string> TimedChoices::recorded(const std::string& label,
                                                  const std::vector<std::vector<int64_t>>& in,
                                                  const std::string& mode) const {
  std::lock_guard lock(mu_);
  auto it = entries_.find(choice_key(label, in, mode));
  if (it == entries_.end()) return std::nullopt;
  return it->second.kernel;
}

std::string TimedChoices::text() const {
  std::lock_guard lock(mu_);
  return format_choice_text(entries_);
}

ChoiceCounts TimedChoices::counts() const {
  std::lock_guard lock(mu_);
  return counts_;
}

std::vector<std::string> TimedChoices::lines() const {
  std::lock_guard lock(mu_);
  return choice_lines(entries_);
}

}  // namespace hone::onednn
