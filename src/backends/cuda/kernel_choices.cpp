#include "backends/cuda/kernel_choices.h"

#include <algorithm>
#include <cctype>

#include "core/log.h"
#include "core/split.h"

namespace hone::cuda {

namespace {

bool reserved(unsigned char c) {
  return c == '%' || c == ';' || c == '=' || c == '|' || c < 0x20 || c == 0x7F;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

/// `s` with its %XX escapes undone; nothing when one is broken.
std::optional<std::string> unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    const int hi = i + 1 < s.size() ? hex_value(s[i + 1]) : -1;
    const int lo = i + 2 < s.size() ? hex_value(s[i + 2]) : -1;
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

/// Whether `s` is "[d,...]" groups of non-negative integers ("[]" for a scalar), at least one.
bool valid_shapes(const std::string& s) {
  if (s.empty()) return false;
  size_t i = 0;
  while (i < s.size()) {
    if (s[i] != '[') return false;
    const size_t close = s.find(']', i);
    if (close == std::string::npos) return false;
    const std::string inner = s.substr(i + 1, close - i - 1);
    if (!inner.empty()) {
      size_t p = 0;
      while (p <= inner.size()) {
        size_t e = inner.find(',', p);
        if (e == std::string::npos) e = inner.size();
        const std::string num = inner.substr(p, e - p);
        if (num.empty() || num.size() > 18 ||
            !std::all_of(num.begin(), num.end(), [](unsigned char c) { return std::isdigit(c); }))
          return false;
        p = e + 1;
      }
    }
    i = close + 1;
  }
  return true;
}

bool valid_mode(const std::string& m) {
  return m == "fp32" || m == "tf32" || m == "bf16" || m == "fp16";
}

Error bad_entry(const std::string& item, const std::string& why) {
  return Error(ErrorCode::kInvalidArgument,
               "cuda kernel_choices entry '" + item + "': " + why +
                   " (expected LABEL|SHAPES|MODE=KERNEL, ';'-separated, or '-')");
}

}  // namespace

std::string shapes_text(const std::vector<std::vector<int64_t>>& in) {
  std::string out;
  for (const auto& d : in) {
    out += '[';
    for (size_t i = 0; i < d.size(); ++i) out += (i ? "," : "") + std::to_string(d[i]);
    out += ']';
  }
  return out;
}

std::string KernelChoices::escape(const std::string& s) {
  static const char* digits = "0123456789ABCDEF";
  std::string out;
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (!reserved(c)) {
      out += ch;
      continue;
    }
    out += '%';
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

std::string KernelChoices::key(const std::string& label,
                               const std::vector<std::vector<int64_t>>& in,
                               const std::string& mode) {
  return escape(label) + "|" + shapes_text(in) + "|" + mode;
}

Result<KernelChoices::Entries> KernelChoices::parse(const std::string& text) {
  Entries out;
  if (text.empty() || text == "-") return out;
  for (const std::string& item : split(text, ';')) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos) return fail(bad_entry(item, "no '='"));
    const std::string key = item.substr(0, eq), kernel_text = item.substr(eq + 1);
    const size_t bar1 = key.find('|');
    const size_t bar2 = bar1 == std::string::npos ? bar1 : key.find('|', bar1 + 1);
    if (bar2 == std::string::npos || key.find('|', bar2 + 1) != std::string::npos)
      return fail(bad_entry(item, "the key is not LABEL|SHAPES|MODE"));
    Entry e;
    const auto label = unescape(key.substr(0, bar1));
    const auto kernel = unescape(kernel_text);
    if (!label || !kernel) return fail(bad_entry(item, "a broken %XX escape"));
    e.label = *label;
    e.shapes = key.substr(bar1 + 1, bar2 - bar1 - 1);
    e.mode = key.substr(bar2 + 1);
    e.kernel = *kernel;
    if (e.label.empty()) return fail(bad_entry(item, "an empty label"));
    if (e.kernel.empty()) return fail(bad_entry(item, "an empty kernel"));
    if (!valid_shapes(e.shapes))
      return fail(bad_entry(item, "shapes '" + e.shapes + "' are not [d,...] groups"));
    if (!valid_mode(e.mode))
      return fail(bad_entry(item, "mode '" + e.mode + "' is not fp32, tf32, bf16 or fp16"));
    // The canonical key, so "%3b" and "%3B" cannot name one unit twice.
    const std::string canonical = escape(e.label) + "|" + e.shapes + "|" + e.mode;
    if (!out.emplace(canonical, std::move(e)).second)
      return fail(bad_entry(item, "its key is given twice"));
  }
  return out;
}

std::string KernelChoices::format(const Entries& entries) {
  if (entries.empty()) return "-";
  std::string out;
  for (const auto& [key, e] : entries)
    out += (out.empty() ? "" : ";") + key + "=" + escape(e.kernel);
  return out;
}

std::optional<KernelChoices::Entry> KernelChoices::entry(const std::string& key) const {
  {
    std::lock_guard lock(mu_);
    if (trial_)
      if (auto it = trial_->entries.find(key); it != trial_->entries.end()) return it->second;
    if (!parent_) {
      auto it = entries_.find(key);
      if (it == entries_.end()) return std::nullopt;
      return it->second;
    }
  }
  return parent_->entry(key);
}

std::optional<size_t> KernelChoices::replay(const std::string& key,
                                            const std::vector<std::string>& kernels,
                                            const std::string& label) {
  if (parent_ && !in_trial()) return parent_->replay(key, kernels, label);
  const std::optional<Entry> e = entry(key);
  if (!e) return std::nullopt;
  const auto at = std::find(kernels.begin(), kernels.end(), e->kernel);
  if (at == kernels.end()) {
    std::string have;
    for (const std::string& k : kernels) have += (have.empty() ? "" : ", ") + k;
    HONE_LOG_WARN(
        "cuda: {} {}: the recorded kernel {} (kernel_choices) is not among this machine's "
        "candidates ({}); timing them instead",
        label, e->shapes, e->kernel, have);
    return std::nullopt;
  }
  count_replayed();
  HONE_LOG_DEBUG("cuda: {} {}: {} from kernel_choices, not timed", label, e->shapes, e->kernel);
  return static_cast<size_t>(at - kernels.begin());
}

bool KernelChoices::in_trial() const {
  std::lock_guard lock(mu_);
  return trial_.has_value();
}

void KernelChoices::record(const std::string& label, const std::vector<std::vector<int64_t>>& in,
                           const std::string& mode, const std::string& kernel, How how) {
  if (parent_ && !in_trial()) return parent_->record(label, in, mode, kernel, how);
  std::lock_guard lock(mu_);
  ChoiceCounts& counts = trial_ ? trial_->counts : counts_;
  if (how == How::kTimed) ++counts.timed;
  if (how == How::kReused) ++counts.reused;
  Entries& entries = trial_ ? trial_->entries : entries_;
  Entry e{label, shapes_text(in), mode, kernel};
  auto [it, added] = entries.try_emplace(key(label, in, mode), e);
  if (!added) {
    if (it->second.kernel == kernel) return;
    it->second = std::move(e);
  }
  if (!trial_ && on_change_) on_change_(format(entries_));
}

std::optional<std::string> KernelChoices::find(const std::string& key) const {
  const std::optional<Entry> e = entry(key);
  if (!e) return std::nullopt;
  return e->kernel;
}

void KernelChoices::count_replayed() {
  if (parent_ && !in_trial()) return parent_->count_replayed();
  std::lock_guard lock(mu_);
  ++(trial_ ? trial_->counts : counts_).replayed;
}

void KernelChoices::begin_trial() {
  std::lock_guard lock(mu_);
  trial_.emplace();
}

KernelChoices::Trial KernelChoices::end_trial() {
  std::lock_guard lock(mu_);
  Trial t = trial_ ? std::move(*trial_) : Trial{};
  trial_.reset();
  return t;
}

void KernelChoices::commit(const Trial& trial) {
  if (parent_) return parent_->commit(trial);
  std::lock_guard lock(mu_);
  bool changed = false;
  for (const auto& [k, e] : trial.entries) {
    auto [it, added] = entries_.try_emplace(k, e);
    if (added) {
      changed = true;
    } else if (it->second.kernel != e.kernel) {
      it->second = e;
      changed = true;
    }
  }
  counts_.timed += trial.counts.timed;
  counts_.replayed += trial.counts.replayed;
  counts_.reused += trial.counts.reused;
  if (changed && on_change_) on_change_(format(entries_));
}

std::string KernelChoices::text() const {
  if (parent_) return parent_->text();
  std::lock_guard lock(mu_);
  return format(entries_);
}

ChoiceCounts KernelChoices::counts() const {
  if (parent_) return parent_->counts();
  std::lock_guard lock(mu_);
  return counts_;
}

std::vector<std::string> KernelChoices::lines() const {
  if (parent_) return parent_->lines();
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  for (const auto& [key, e] : entries_)
    out.push_back("choice: " + e.label + " " + e.shapes + " " + e.mode + " -> " + e.kernel);
  return out;
}

}  // namespace hone::cuda
