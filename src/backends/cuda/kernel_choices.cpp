#include "backends/cuda/kernel_choices.h"

#include <algorithm>

#include "core/log.h"

namespace hone::cuda {

namespace {

bool valid_mode(const std::string& m) {
  return m == "fp32" || m == "tf32" || m == "bf16" || m == "fp16" || m == "fp8";
}

const ChoiceSyntax& syntax() {
  static const ChoiceSyntax s{"cuda kernel_choices", "kernel", "fp32, tf32, bf16, fp16 or fp8",
                              valid_mode};
  return s;
}

}  // namespace

std::string shapes_text(const std::vector<std::vector<int64_t>>& in) {
  return choice_shapes_text(in);
}

std::string KernelChoices::escape(const std::string& s) {
  return escape_choice_text(s);
}

std::string KernelChoices::key(const std::string& label,
                               const std::vector<std::vector<int64_t>>& in,
                               const std::string& mode) {
  return choice_key(label, in, mode);
}

Result<KernelChoices::Entries> KernelChoices::parse(const std::string& text) {
  return parse_choice_text(text, syntax());
}

std::string KernelChoices::format(const Entries& entries) {
  return format_choice_text(entries);
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
  return choice_lines(entries_);
}

}  // namespace hone::cuda
