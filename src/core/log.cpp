#include "hone/logging.h"

#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>

#include "hone/log_sink.h"

#include "core/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace hone {
namespace detail {
namespace {

spdlog::level::level_enum to_spdlog(LogLevel level) {
  static constexpr spdlog::level::level_enum kMap[] = {spdlog::level::trace, spdlog::level::debug,
                                                       spdlog::level::info,  spdlog::level::warn,
                                                       spdlog::level::err,   spdlog::level::off};
  return kMap[static_cast<int>(level)];
}

spdlog::logger& logger() {
  static std::shared_ptr<spdlog::logger> log = [] {
    auto l = spdlog::stderr_color_mt("hone");
    l->set_pattern("[%H:%M:%S.%e] [%^%l%$] %v");
    l->set_level(spdlog::level::warn);
    return l;
  }();
  return *log;
}

/// The sink set_log_sink installed; null: stderr. Read under the mutex, called outside it.
struct SinkSlot {
  std::mutex mu;
  std::shared_ptr<const LogSink> sink;
};

SinkSlot& sink_slot() {
  static auto* slot = new SinkSlot;  // never destroyed: threads may log during exit
  return *slot;
}

}  // namespace

bool log_enabled(LogLevel level) {
  return logger().should_log(to_spdlog(level));
}

void log_message(LogLevel level, std::string_view message) {
  std::shared_ptr<const LogSink> sink;
  {
    const std::lock_guard lock(sink_slot().mu);
    sink = sink_slot().sink;
  }
  if (sink) {
    (*sink)(level, message);
    return;
  }
  logger().log(to_spdlog(level), spdlog::string_view_t(message.data(), message.size()));
}

}  // namespace detail

void set_log_level(LogLevel level) {
  detail::logger().set_level(detail::to_spdlog(level));
}

void set_log_sink(LogSink sink) {
  auto next = sink ? std::make_shared<const LogSink>(std::move(sink)) : nullptr;
  const std::lock_guard lock(detail::sink_slot().mu);
  detail::sink_slot().sink = std::move(next);
}

LogLevel log_level() {
  switch (detail::logger().level()) {
    case spdlog::level::trace:
      return LogLevel::kTrace;
    case spdlog::level::debug:
      return LogLevel::kDebug;
    case spdlog::level::info:
      return LogLevel::kInfo;
    case spdlog::level::warn:
      return LogLevel::kWarn;
    case spdlog::level::err:
    case spdlog::level::critical:
      return LogLevel::kError;
    default:
      return LogLevel::kOff;
  }
}

Result<LogLevel> parse_log_level(std::string_view name) {
  if (name == "trace") return LogLevel::kTrace;
  if (name == "debug") return LogLevel::kDebug;
  if (name == "info") return LogLevel::kInfo;
  if (name == "warn" || name == "warning") return LogLevel::kWarn;
  if (name == "error") return LogLevel::kError;
  if (name == "off") return LogLevel::kOff;
  return fail(ErrorCode::kInvalidArgument, "unknown log level '" + std::string(name) +
                                               "' (trace, debug, info, warn, error, off)");
}

void set_log_level_from_env() {
  const char* env = std::getenv("HONE_LOG");
  if (env == nullptr) return;
  if (auto level = parse_log_level(env)) set_log_level(*level);
}

}  // namespace hone
