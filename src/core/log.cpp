#include "hone/logging.h"

#include <cstdlib>
#include <string>

#include <spdlog/sinks/stdout_color_sinks.h>

#include "core/log.h"

namespace hone {
namespace detail {

spdlog::logger& logger() {
  static std::shared_ptr<spdlog::logger> log = [] {
    auto l = spdlog::stderr_color_mt("hone");
    l->set_pattern("[%H:%M:%S.%e] [%^%l%$] %v");
    l->set_level(spdlog::level::warn);
    return l;
  }();
  return *log;
}

}  // namespace detail

void set_log_level(LogLevel level) {
  static constexpr spdlog::level::level_enum kMap[] = {
      spdlog::level::trace, spdlog::level::debug, spdlog::level::info,
      spdlog::level::warn,  spdlog::level::err,   spdlog::level::off};
  detail::logger().set_level(kMap[static_cast<int>(level)]);
}

Result<LogLevel> parse_log_level(std::string_view name) {
  if (name == "trace") return LogLevel::kTrace;
  if (name == "debug") return LogLevel::kDebug;
  if (name == "info") return LogLevel::kInfo;
  if (name == "warn" || name == "warning") return LogLevel::kWarn;
  if (name == "error") return LogLevel::kError;
  if (name == "off") return LogLevel::kOff;
  return fail(ErrorCode::kInvalidArgument,
              "unknown log level '" + std::string(name) + "' (trace, debug, info, warn, error, off)");
}

void set_log_level_from_env() {
  const char* env = std::getenv("HONE_LOG");
  if (env == nullptr) return;
  if (auto level = parse_log_level(env)) set_log_level(*level);
}

}  // namespace hone
