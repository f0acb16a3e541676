// Between hone's long calls and Python: hone's log messages forwarded to
// Python's `logging` (the logger "hone"), a tune's progress callback, and
// Ctrl-C, which cancels a tune cleanly.
//
//   TuneHooks hooks(progress);  hooks.attach(options);
//   auto r = without_gil([&] { return tune(graph, samples, strategy, options); });
//   hooks.finish();             // raises the KeyboardInterrupt that cancelled it, if one did
//
// hone logs from any thread, often with the GIL released; taking the GIL
// there could deadlock against a thread that holds it while it waits for
// hone. So the sink only queues (a bounded queue, plain C++), and the queue
// goes to `logging` where the GIL is held: after each call that released it
// and at each progress event.
#pragma once

#include <atomic>
#include <mutex>
#include <optional>

#include <pybind11/pybind11.h>

#include "hone/tune.h"

namespace hone::python {

namespace py = pybind11;

/// Sends hone's log messages to the queue flush_log() empties. Once, at import.
void install_log_bridge();
/// With the GIL: hands the queued messages to logging.getLogger("hone").
void flush_log();
/// With the GIL: sets hone's log level to the logger "hone"'s effective level,
/// so messages nobody would see are not even formatted.
void sync_log_level();

/// Runs `f` with the GIL released, after sync_log_level(); flush_log() after.
template <class F>
auto without_gil(F&& f) {
  sync_log_level();
  auto result = [&] {
    py::gil_scoped_release release;
    return f();
  }();
  flush_log();
  return result;
}

/// A tune's progress callback and its cancellation. attach() sets
/// TuneOptions::progress and ::cancelled; each event and each check between
/// candidates takes the GIL, looks for a pending signal (PyErr_CheckSignals:
/// Ctrl-C raises KeyboardInterrupt there) and calls `progress` with a dict of
/// the event. An exception from either stops the tune at its next check;
/// finish() raises it once tune() has returned. Must outlive the tune.
class TuneHooks {
 public:
  explicit TuneHooks(py::object progress) : progress_(std::move(progress)) {}
  TuneHooks(const TuneHooks&) = delete;
  TuneHooks& operator=(const TuneHooks&) = delete;

  void attach(TuneOptions& options);
  /// With the GIL: raises the exception that cancelled the tune, if one did.
  void finish();

 private:
  /// With the GIL taken inside: false once an exception asked to stop.
  bool poll(const TuneEvent* event);
  py::object progress_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;  // guards error_
  std::optional<py::error_already_set> error_;
};

}  // namespace hone::python
