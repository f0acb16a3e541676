#include "hone/limits.h"

#include <unistd.h>

#include <atomic>
#include <charconv>
#include <cmath>

#include <fmt/core.h>

namespace hone {
namespace {

std::atomic<uint64_t> g_budget{0};  // 0: the default

uint64_t default_budget() {
  // Asked once: every tensor allocation checks the budget, and sysconf()
  // makes a sysinfo() system call each time.
  static const uint64_t budget = [] {
    const uint64_t phys = physical_memory_bytes();
    // Unknown physical memory: no limit but the allocator's.
    return phys == 0 ? UINT64_MAX : phys / 4 * 3;
  }();
  return budget;
}

}  // namespace

uint64_t physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return 0;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
}

uint64_t memory_budget() {
  const uint64_t b = g_budget.load(std::memory_order_relaxed);
  return b == 0 ? default_budget() : b;
}

void set_memory_budget(uint64_t bytes) {
  g_budget.store(bytes, std::memory_order_relaxed);
}

std::string format_bytes(uint64_t bytes) {
  const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return std::to_string(bytes) + " bytes";
  double v = static_cast<double>(bytes);
  int u = -1;
  while (v >= 1024 && u < 5) {
    v /= 1024;
    ++u;
  }
  return fmt::format("{:.3g} {}", v, units[u]);
}

Result<void> check_allocation(uint64_t bytes, std::string_view what) {
  const uint64_t budget = memory_budget();
  if (bytes <= budget) return {};
  return fail(ErrorCode::kOutOfMemory, std::string(what) + " needs " + format_bytes(bytes) + " (" +
                                           std::to_string(bytes) +
                                           " bytes), more than the memory budget of " +
                                           format_bytes(budget) + " (raise it with --max-memory)");
}

Result<uint64_t> parse_byte_size(std::string_view text) {
  const std::string t(text);
  double v = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || end == t.data() || !std::isfinite(v) || v < 0)
    return fail(ErrorCode::kInvalidArgument,
                "'" + t + "' is not a size (for example 512M, 8G or 1073741824)");
  std::string_view unit(end, static_cast<size_t>(t.data() + t.size() - end));
  double mul = 1;
  if (unit.size() > 1 && (unit.back() == 'B' || unit.back() == 'b')) unit.remove_suffix(1);
  if (unit.size() > 1 && unit.back() == 'i') unit.remove_suffix(1);
  if (unit.empty()) {
    mul = 1;
  } else if (unit.size() == 1) {
    switch (unit[0]) {
      case 'k':
      case 'K':
        mul = 1024.0;
        break;
      case 'm':
      case 'M':
        mul = 1024.0 * 1024;
        break;
      case 'g':
      case 'G':
        mul = 1024.0 * 1024 * 1024;
        break;
      case 't':
      case 'T':
        mul = 1024.0 * 1024 * 1024 * 1024;
        break;
      default:
        return fail(ErrorCode::kInvalidArgument, "'" + t + "' has an unknown unit (K, M, G or T)");
    }
  } else {
    return fail(ErrorCode::kInvalidArgument, "'" + t + "' has an unknown unit (K, M, G or T)");
  }
  const double bytes = v * mul;
  if (bytes >= 1.8e19) return fail(ErrorCode::kInvalidArgument, "'" + t + "' is too large");
  if (bytes < 1) return fail(ErrorCode::kInvalidArgument, "'" + t + "' is less than one byte");
  return static_cast<uint64_t>(bytes);
}

}  // namespace hone
