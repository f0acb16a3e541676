// Sending hone's log messages somewhere other than stderr: an embedding
// program's own logging (the Python module hands them to `logging`).
//
//   hone::set_log_sink([](hone::LogLevel level, std::string_view msg) { my_log(level, msg); });
//   hone::set_log_sink(nullptr);                        // back to stderr
//
// Only messages at or above the level set_log_level() set reach the sink.
#pragma once

#include <functional>
#include <string_view>

#include "hone/logging.h"

namespace hone {

/// Receives each message on the thread that logged it, possibly on several
/// threads at once: it must be thread-safe and quick, and must not log
/// through hone itself. The message has no trailing newline.
using LogSink = std::function<void(LogLevel level, std::string_view message)>;

/// Installs `sink` in place of stderr, replacing any earlier sink; an empty
/// one restores stderr. Thread-safe; a message being written while the sink
/// changes goes to the old or the new one, never to neither.
void set_log_sink(LogSink sink);

/// The level set_log_level() last set (kWarn until then).
[[nodiscard]] LogLevel log_level();

}  // namespace hone
