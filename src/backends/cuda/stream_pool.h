// Private to the cuda backend: the streams inferences run on. A call takes
// one Exec (stream, cuBLAS and cuDNN handles, device arena, pinned staging
// buffers, the CUDA graphs it captured), uses it alone, and gives it back
// when it succeeded; a failed one is dropped.
//
//   HONE_TRY(std::unique_ptr<StreamPool::Exec> ex, pool->take());
//   ... enqueue on ex->stream.get(), synchronize ...
//   pool->give(std::move(ex));
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

#include "backends/cuda/cuda_api.h"
#include "backends/cuda/run_errors.h"

namespace hone::cuda {

inline constexpr unsigned kEventNoTiming = 2;  // CU_EVENT_DISABLE_TIMING

/// Two events: on one stream, the device time between them; or (made with
/// kEventNoTiming) the points where two streams wait for each other.
class EventPair {
 public:
  /// `flags`: cuEventCreate's (kEventNoTiming for events only waited on).
  static Result<EventPair> create(const Driver& d, unsigned flags = 0) {
    EventPair p;
    p.d_ = &d;
    HONE_CHECK_OK(d.check(d.api().cuEventCreate(&p.begin_, flags), "cuEventCreate"));
    HONE_CHECK_OK(d.check(d.api().cuEventCreate(&p.end_, flags), "cuEventCreate"));
    return p;
  }
  EventPair() = default;
  EventPair(EventPair&& o) noexcept { swap(o); }
  EventPair& operator=(EventPair&& o) noexcept {
    EventPair t(std::move(o));
    swap(t);
    return *this;
  }
  ~EventPair() {
    if (begin_ == nullptr && end_ == nullptr) return;
    (void)d_->make_current();
    for (CUevent e : {begin_, end_})
      if (e != nullptr) (void)d_->api().cuEventDestroy(e);
  }
  CUevent begin() const { return begin_; }
  CUevent end() const { return end_; }

 private:
  void swap(EventPair& o) noexcept {
    std::swap(d_, o.d_);
    std::swap(begin_, o.begin_);
    std::swap(end_, o.end_);
  }
  const Driver* d_ = nullptr;
  CUevent begin_ = nullptr, end_ = nullptr;
};

/// Streams (each with its cuBLAS handle and a device arena) for inferences:
/// a call takes one, uses it alone, and gives it back when it succeeded.
struct StreamPool {
  struct Exec {
    Stream stream;
    DeviceBuffer arena;
    // CUDA graphs of the programs this stream ran, keyed by program (programs
    // live as long as their block, and a build makes a new pool); captured
    // on a program's second run here, dropped when the arena moves.
    std::map<const void*, GraphExec> graphs;
    std::set<const void*> ran;
    PinnedBuffer staging;      // large inputs pass through here (upload())
    PinnedBuffer out_staging;  // large outputs are downloaded here (parallel_copy())
    EventPair steps;           // around the steps: their device time
    // Device-resident runs (CudaBlock::run_on_device): begin() on the caller's
    // stream, which this stream waits for; end() on this stream, which the
    // caller's waits for.
    EventPair handoff;
    RunErrors errors;  // the word its kernels flag bad indices in (run_errors.h)
  };
  const Driver* d = nullptr;
  int math_mode = kCublasDefaultMath;      // every handle of the pool, from the precision setting
  const Cudnn* dnn = nullptr;              // every stream gets a cuDNN handle when set
  bool graphs = true;                      // the cuda_graphs setting
  std::atomic<bool> pinned_outputs{true};  // false once page-locked memory was refused
  std::mutex mu;
  std::vector<std::unique_ptr<Exec>> idle;

  Result<std::unique_ptr<Exec>> take() {
    {
      std::lock_guard lock(mu);
      if (!idle.empty()) {
        auto e = std::move(idle.back());
        idle.pop_back();
        return e;
      }
    }
    HONE_TRY(Stream s, Stream::create(*d, math_mode, dnn));
    HONE_TRY(EventPair ev, EventPair::create(*d));
    HONE_TRY(EventPair handoff, EventPair::create(*d, kEventNoTiming));
    HONE_TRY(RunErrors errors, RunErrors::create(*d));
    return std::make_unique<Exec>(Exec{std::move(s),
                                       DeviceBuffer(),
                                       {},
                                       {},
                                       PinnedBuffer(),
                                       PinnedBuffer(),
                                       std::move(ev),
                                       std::move(handoff),
                                       std::move(errors)});
  }
  void give(std::unique_ptr<Exec> e) {
    std::lock_guard lock(mu);
    idle.push_back(std::move(e));
  }
};

}  // namespace hone::cuda
