// Internal logging macros; include only in .cpp files.
//   HONE_LOG_DEBUG("partition: {} nodes on {}", n, name);
// The message is formatted (fmt) only when the level is enabled, then handed
// to log.cpp, the one file that includes spdlog: spdlog's headers and its
// per-call templates cost each including file about a second of compile time.
#pragma once

#include <string_view>

#include <fmt/core.h>

#include "hone/logging.h"

namespace hone::detail {
/// True when messages at `level` are written (the level set_log_level set).
[[nodiscard]] bool log_enabled(LogLevel level);
/// Writes one message through hone's spdlog logger ("hone", stderr).
void log_message(LogLevel level, std::string_view message);
}  // namespace hone::detail

#define HONE_LOG_AT_(level, ...)                                      \
  do {                                                                \
    if (::hone::detail::log_enabled(level))                           \
      ::hone::detail::log_message(level, ::fmt::format(__VA_ARGS__)); \
  } while (0)
#define HONE_LOG_TRACE(...) HONE_LOG_AT_(::hone::LogLevel::kTrace, __VA_ARGS__)
#define HONE_LOG_DEBUG(...) HONE_LOG_AT_(::hone::LogLevel::kDebug, __VA_ARGS__)
#define HONE_LOG_INFO(...) HONE_LOG_AT_(::hone::LogLevel::kInfo, __VA_ARGS__)
#define HONE_LOG_WARN(...) HONE_LOG_AT_(::hone::LogLevel::kWarn, __VA_ARGS__)
#define HONE_LOG_ERROR(...) HONE_LOG_AT_(::hone::LogLevel::kError, __VA_ARGS__)
