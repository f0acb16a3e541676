// Logging controls. hone logs through spdlog to stderr under the logger name
// "hone"; library code never writes to stdout.
//
//   hone::set_log_level(hone::LogLevel::kDebug);   // show partition/kernel decisions
//   hone::set_log_level_from_env();                  // HONE_LOG=debug|info|warn|error|off
#pragma once

#include <string_view>

#include "hone/error.h"

namespace hone {

enum class LogLevel { kTrace, kDebug, kInfo, kWarn, kError, kOff };

void set_log_level(LogLevel level);
[[nodiscard]] Result<LogLevel> parse_log_level(std::string_view name);
/// Applies HONE_LOG if set and valid; otherwise leaves the level (default warn).
void set_log_level_from_env();

}  // namespace hone
