#include "hone/thread_pool.h"

#include "hone/limits.h"

#include <algorithm>
#include <exception>
#include <memory>
#include <system_error>

namespace hone {
namespace {

thread_local bool t_inside_pool = false;

std::unique_ptr<ThreadPool>& global_slot() {
  static std::unique_ptr<ThreadPool> pool;
  return pool;
}

}  // namespace

int ThreadPool::hardware_threads() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

ThreadPool::ThreadPool(int num_threads) {
  if (num_threads <= 0) num_threads = hardware_threads();
  num_threads = std::min(num_threads, kMaxThreads);
  for (int i = 1; i < num_threads; ++i) {
    // std::thread throws std::system_error when the system has no thread to
    // give (ulimit -u, memory); a smaller pool is still a correct pool.
    try {
      workers_.emplace_back([this, i] { worker_loop(i); });
    } catch (const std::system_error&) {
      break;
    }
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::worker_loop(int /*index*/) {
  t_inside_pool = true;
  uint64_t seen = 0;
  for (;;) {
    std::unique_lock<std::mutex> lock(mutex_);
    work_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
    if (stop_) return;
    seen = generation_;
    for (;;) {
      if (next_ >= job_n_) break;
      const int64_t b = next_;
      const int64_t e = std::min(job_n_, b + chunk_);
      next_ = e;
      lock.unlock();
      try {
        (*job_)(b, e);
      } catch (...) {
        std::lock_guard<std::mutex> g(mutex_);
        if (!error_) error_ = std::current_exception();
      }
      lock.lock();
    }
    if (--pending_ == 0) done_cv_.notify_all();
  }
}

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn,
                              int64_t grain) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  const int64_t max_chunks = (n + grain - 1) / grain;
  if (workers_.empty() || t_inside_pool || max_chunks <= 1) {
    fn(0, n);
    return;
  }
  std::lock_guard<std::mutex> run_lock(run_mutex_);
  const int64_t threads = num_threads();
  // A few chunks per thread balances uneven work without much overhead.
  const int64_t chunks = std::min<int64_t>(max_chunks, threads * 4);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job_ = &fn;
    job_n_ = n;
    chunk_ = (n + chunks - 1) / chunks;
    next_ = 0;
    pending_ = static_cast<int>(workers_.size());
    error_ = nullptr;
    ++generation_;
  }
  work_cv_.notify_all();
  // The caller takes chunks too.
  t_inside_pool = true;
  std::unique_lock<std::mutex> lock(mutex_);
  while (next_ < job_n_) {
    const int64_t b = next_;
    const int64_t e = std::min(job_n_, b + chunk_);
    next_ = e;
    lock.unlock();
    try {
      fn(b, e);
    } catch (...) {
      std::lock_guard<std::mutex> g(mutex_);
      if (!error_) error_ = std::current_exception();
    }
    lock.lock();
  }
  done_cv_.wait(lock, [&] { return pending_ == 0; });
  t_inside_pool = false;
  job_ = nullptr;
  if (error_) {
    auto e = error_;
    error_ = nullptr;
    lock.unlock();
    std::rethrow_exception(e);
  }
}

ThreadPool& ThreadPool::global() {
  auto& slot = global_slot();
  if (!slot) slot = std::make_unique<ThreadPool>(0);
  return *slot;
}

void ThreadPool::set_global_threads(int num_threads) {
  global_slot() = std::make_unique<ThreadPool>(num_threads);
}

}  // namespace hone
