// hone::ThreadPool: a fixed set of worker threads that split a range of work.
//
//   ThreadPool pool(4);                          // 4 threads including the caller
//   pool.parallel_for(n, [&](int64_t b, int64_t e) { for (i = b; i < e; ++i) ... });
//   ThreadPool& p = ThreadPool::global();        // sized by set_num_threads()
//
// parallel_for blocks until all chunks finish; the calling thread works too.
// Thread-safety: parallel_for may be called from several threads; calls are
// serialized. A nested call from inside a chunk runs inline on that thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace hone {

class ThreadPool {
 public:
  /// `num_threads` counts the caller; 0 means "all hardware threads".
  explicit ThreadPool(int num_threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return static_cast<int>(workers_.size()) + 1; }

  /// Calls fn(begin, end) over disjoint chunks covering [0, n). Chunks hold
  /// at least `grain` items. Exceptions from fn are rethrown in the caller.
  void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn, int64_t grain = 1);

  /// The process-wide pool used by backends unless they are given another.
  static ThreadPool& global();
  /// Resizes the global pool (0 = all hardware threads). Not safe while the
  /// global pool is running work.
  static void set_global_threads(int num_threads);
  static int hardware_threads();

 private:
  void worker_loop(int index);

  std::vector<std::thread> workers_;
  std::mutex run_mutex_;  // serializes parallel_for calls
  std::mutex mutex_;
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  const std::function<void(int64_t, int64_t)>* job_ = nullptr;
  int64_t job_n_ = 0;
  int64_t chunk_ = 0;
  int64_t next_ = 0;
  int pending_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
};

}  // namespace hone
