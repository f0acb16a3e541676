// The check that a backend's infer() may be called from several threads at
// once: every concurrent run gives the first run's outputs bit for bit.
//
//   auto be = build_onednn(g);
//   EXPECT_TRUE(backend_test::concurrent_infer_is_bitwise_identical(*be, {x}));
//   EXPECT_EQ(be->executions(), 21u);  // the first run and 4 threads x 5 runs
#pragma once

#include <atomic>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "hone/tensor.h"

namespace hone::backend_test {

/// Runs `be` on `inputs` once, then `threads` threads run it `runs` times
/// each; fails when the first run fails, or naming how many later runs
/// failed or differed from the first in any output's bits.
template <class B>
::testing::AssertionResult concurrent_infer_is_bitwise_identical(B& be,
                                                                 const std::vector<Tensor>& inputs,
                                                                 int threads = 4, int runs = 5) {
  auto first = be.infer(inputs);
  if (!first) return ::testing::AssertionFailure() << "first run: " << first.error().to_string();
  std::atomic<int> mismatches{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      for (int i = 0; i < runs; ++i) {
        auto y = be.infer(inputs);
        bool same = y && y->size() == first->size();
        for (size_t k = 0; same && k < y->size(); ++k) same = (*y)[k].bitwise_equal((*first)[k]);
        if (!same) ++mismatches;
      }
    });
  for (std::thread& t : pool) t.join();
  if (mismatches.load() == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << mismatches.load() << " of " << threads * runs
                                       << " concurrent runs failed or differed from the first";
}

}  // namespace hone::backend_test
