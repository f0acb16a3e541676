#include "hone/thread_pool.h"

#include <atomic>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

namespace hone {
namespace {

TEST(ThreadPool, CoversRangeExactlyOnce) {
  ThreadPool pool(3);
  EXPECT_EQ(pool.num_threads(), 3);
  std::vector<std::atomic<int>> hits(1000);
  pool.parallel_for(1000, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) hits[i].fetch_add(1);
  });
  for (auto& h : hits) EXPECT_EQ(h.load(), 1);
}

TEST(ThreadPool, NestedCallsRunInlineAndExceptionsPropagate) {
  ThreadPool pool(2);
  std::atomic<int64_t> sum{0};
  pool.parallel_for(8, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      pool.parallel_for(10, [&](int64_t bb, int64_t ee) { sum += ee - bb; });
  });
  EXPECT_EQ(sum.load(), 80);
  EXPECT_THROW(pool.parallel_for(4, [](int64_t, int64_t) { throw std::runtime_error("x"); }),
               std::runtime_error);
  // Still usable after an exception.
  std::atomic<int> n{0};
  pool.parallel_for(4, [&](int64_t b, int64_t e) { n += static_cast<int>(e - b); });
  EXPECT_EQ(n.load(), 4);
}

}  // namespace
}  // namespace hone
