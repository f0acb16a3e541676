#include "backends/cuda/activations_choice.h"

#include <algorithm>
#include <cstdio>

namespace hone::cuda {

namespace {

constexpr const char* kActivationsSuffix = " activations";

std::string ms_text(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f ms", ms);
  return buf;
}

}  // namespace

Result<ActivationsMode> parse_activations(const std::string& value) {
  if (value == "f32") return ActivationsMode::kF32;
  if (value == "half") return ActivationsMode::kHalf;
  if (value == "auto") return ActivationsMode::kAuto;
  return fail(ErrorCode::kInvalidArgument,
              "cuda activations '" + value + "': expected auto, f32 or half");
}

std::string activations_label(const Graph& block) {
  std::string first = "no node";
  if (!block.nodes().empty()) first = block.nodes().front().describe();
  return "block '" + block.name() + "' from " + first + kActivationsSuffix;
}

bool is_activations_label(const std::string& label) {
  return label.starts_with("block '") && label.ends_with(kActivationsSuffix);
}

Result<bool> recorded_half(const KernelChoices::Entry& e) {
  if (e.kernel == "half") return true;
  if (e.kernel == "f32") return false;
  return fail(ErrorCode::kInvalidArgument,
              "cuda kernel_choices entry '" + KernelChoices::escape(e.label) + "|" + e.shapes +
                  "|" + e.mode + "=" + KernelChoices::escape(e.kernel) +
                  "': an activations choice is 'half' or 'f32', not '" + e.kernel + "'");
}

Result<void> check_activations_entries(const KernelChoices::Entries& entries) {
  for (const auto& [key, e] : entries)
    if (is_activations_label(e.label)) HONE_CHECK_OK(recorded_half(e));
  return {};
}

double median_ms(std::vector<double> ms) {
  if (ms.empty()) return 0;
  std::sort(ms.begin(), ms.end());
  const size_t n = ms.size();
  return n % 2 == 1 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
}

bool half_wins(double half_ms, double f32_ms) {
  return half_ms < f32_ms;
}

std::string activations_line(const std::string& what, const ActivationsDecision& d,
                             const std::string& half_type) {
  using How = ActivationsDecision::How;
  std::string out = what + ": " + (d.half ? "half (" + half_type + ")" : std::string("f32"));
  const std::string times = "half " + ms_text(d.half_ms) + ", f32 " + ms_text(d.f32_ms);
  switch (d.how) {
    case How::kTimed:
      return out + ", timed: " + times;
    case How::kReused:
      return out + ", timed earlier in this process: " + times;
    case How::kReplayed:
      return out + ", from kernel_choices (not timed)";
    case How::kOnlyF32:
      return out + ", no value has a " + half_type + " kernel here (not timed)";
    case How::kHalfFailed:
      return out + ", the " + half_type + " Program failed (the log says why)";
  }
  return out;
}

}  // namespace hone::cuda
