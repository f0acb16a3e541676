// Resource limits hone checks before it commits resources, so a hostile
// shape, a 20 GB weight or a thread count of 20000 is an error naming it
// rather than an OOM kill or std::system_error: the memory budget (the most
// bytes one tensor, initializer or arena may take) and the thread cap.
//
//   HONE_CHECK_OK(hone::check_allocation(bytes, "initializer 'w'"));
//   hone::set_memory_budget(8ull << 30);    // `hone --max-memory 8G`
//   if (threads > hone::kMaxThreads) ...     // `--threads`, a package's count
//
// Default budget: three quarters of physical memory. Thread-safety: all
// functions may be called from any thread (the budget is an atomic).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "hone/error.h"

namespace hone {

/// The most threads a pool, a --threads option or a package's thread count
/// may ask for. Entry points check against it and say so; ThreadPool clamps
/// to it and stops early when the system refuses a thread.
inline constexpr int kMaxThreads = 1024;

/// The current budget in bytes.
uint64_t memory_budget();
/// Sets the budget; 0 restores the default.
void set_memory_budget(uint64_t bytes);
/// Physical memory of this machine in bytes (0 when unknown).
uint64_t physical_memory_bytes();

/// kOutOfMemory naming `what` and both sizes when `bytes` exceeds the budget.
[[nodiscard]] Result<void> check_allocation(uint64_t bytes, std::string_view what);

/// Parses "512M", "8G", "1.5G", "1024" (bytes; K, M, G, T are powers of 1024).
[[nodiscard]] Result<uint64_t> parse_byte_size(std::string_view text);
/// "1.5 GiB", "512 MiB", "100 bytes".
std::string format_bytes(uint64_t bytes);

}  // namespace hone
