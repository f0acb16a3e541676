// ops::topk_order (ops/topk.h): the positions of the k first values in TopK's
// order, checked against a full stable sort by the same order, on rows with
// many ties and NaNs, for every k, both directions.
#include "ops/topk.h"

#include <gtest/gtest.h>

#include <limits>
#include <random>

namespace hone::ops {
namespace {

TEST(OpsTopk, OrderEqualsAFullStableSort) {
  std::mt19937 rng(77);
  std::uniform_int_distribution<int> value(0, 9);  // few distinct values: many ties
  for (const int64_t len : {1, 2, 7, 64, 333}) {
    std::vector<float> row(static_cast<size_t>(len));
    for (float& v : row)
      v = value(rng) == 0 ? std::numeric_limits<float>::quiet_NaN()
                          : static_cast<float>(value(rng));
    auto greater = [&](int64_t i, int64_t j) {
      return nan_greater(row[static_cast<size_t>(i)], row[static_cast<size_t>(j)]);
    };
    for (const bool largest : {true, false}) {
      std::vector<int64_t> all(static_cast<size_t>(len));
      for (int64_t i = 0; i < len; ++i) all[static_cast<size_t>(i)] = i;
      std::stable_sort(all.begin(), all.end(), [&](int64_t i, int64_t j) {
        return largest ? greater(i, j) : greater(j, i);
      });
      for (int64_t k = 1; k <= len; ++k) {
        SCOPED_TRACE("len " + std::to_string(len) + " k " + std::to_string(k) +
                     (largest ? " largest" : " smallest"));
        std::vector<int64_t> idx;
        topk_order(len, k, largest, greater, idx);
        ASSERT_GE(idx.size(), static_cast<size_t>(k));
        EXPECT_TRUE(std::equal(all.begin(), all.begin() + k, idx.begin()));
      }
    }
  }
}

}  // namespace
}  // namespace hone::ops
