#include "hooks.h"

#include <cstddef>
#include <deque>
#include <string>
#include <utility>

#include "hone/log_sink.h"
#include "hone/logging.h"

namespace hone::python {

namespace {

/// Messages waiting for the GIL. Never destroyed: a thread of hone's may log
/// while the interpreter and static objects are going away.
struct LogQueue {
  static constexpr size_t kMax = 4096;  // past this the oldest go, counted
  std::mutex mu;
  std::deque<std::pair<LogLevel, std::string>> messages;
  size_t dropped = 0;
  std::atomic<bool> pending{false};
};

LogQueue& log_queue() {
  static auto* q = new LogQueue;
  return *q;
}

int python_level(LogLevel level) {
  switch (level) {
    case LogLevel::kTrace:
      return 5;
    case LogLevel::kDebug:
      return 10;
    case LogLevel::kInfo:
      return 20;
    case LogLevel::kWarn:
      return 30;
    case LogLevel::kError:
    case LogLevel::kOff:
      break;
  }
  return 40;
}

LogLevel hone_level(int python) {
  if (python <= 5) return LogLevel::kTrace;
  if (python <= 10) return LogLevel::kDebug;
  if (python <= 20) return LogLevel::kInfo;
  if (python <= 30) return LogLevel::kWarn;
  if (python <= 40) return LogLevel::kError;
  return LogLevel::kOff;
}

py::object logger() {
  return py::module_::import("logging").attr("getLogger")("hone");
}

}  // namespace

void install_log_bridge() {
  set_log_sink([](LogLevel level, std::string_view message) {
    LogQueue& q = log_queue();
    const std::lock_guard lock(q.mu);
    if (q.messages.size() == LogQueue::kMax) {
      q.messages.pop_front();
      ++q.dropped;
    }
    q.messages.emplace_back(level, std::string(message));
    q.pending = true;
  });
}

void flush_log() {
  LogQueue& q = log_queue();
  if (!q.pending) return;
  std::deque<std::pair<LogLevel, std::string>> messages;
  size_t dropped = 0;
  {
    const std::lock_guard lock(q.mu);
    messages.swap(q.messages);
    std::swap(dropped, q.dropped);
    q.pending = false;
  }
  py::object log = logger();
  if (dropped > 0)
    log.attr("warning")("%d earlier hone log messages were dropped (more than %d waited)", dropped,
                        LogQueue::kMax);
  for (const auto& [level, text] : messages) log.attr("log")(python_level(level), "%s", text);
}

void sync_log_level() {
  set_log_level(hone_level(logger().attr("getEffectiveLevel")().cast<int>()));
}

void TuneHooks::attach(TuneOptions& options) {
  options.progress = [this](const TuneEvent& e) { (void)poll(&e); };
  options.cancelled = [this] { return !poll(nullptr); };
}

bool TuneHooks::poll(const TuneEvent* event) {
  if (stop_) return false;
  py::gil_scoped_acquire gil;
  flush_log();
  try {
    // Ctrl-C while hone ran without the GIL only set a flag: this runs
    // Python's handler, which raises KeyboardInterrupt (on the main thread).
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    if (event != nullptr && !progress_.is_none()) {
      py::dict d;
      d["candidate"] = event->candidate;
      d["step"] = event->step;
      d["candidate_index"] = event->candidate_index;
      d["candidate_count"] = event->candidate_count;
      d["fraction"] = event->fraction;
      d["eta_s"] = event->eta_s;
      progress_(d);
    }
  } catch (py::error_already_set& e) {
    const std::lock_guard lock(mu_);
    if (!error_) error_.emplace(std::move(e));
    stop_ = true;
    return false;
  }
  return true;
}

void TuneHooks::finish() {
  flush_log();
  std::optional<py::error_already_set> e;
  {
    const std::lock_guard lock(mu_);
    e.swap(error_);
  }
  if (e) throw std::move(*e);
}

}  // namespace hone::python
