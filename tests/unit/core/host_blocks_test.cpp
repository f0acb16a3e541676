#include "core/host_blocks.h"

#include <cstdint>
#include <cstring>

#include <gtest/gtest.h>

#include "core/block_cache.h"
#include "hone/tensor.h"

namespace hone {
namespace {

TEST(HostBlocks, AFreedLargeTensorIsReusedAndComesBackZeroed) {
  detail::large_block_trim();
  const int64_t n = 3 << 20;  // 12 MiB of f32
  void* first = nullptr;
  {
    Tensor t = Tensor::zeros(DType::kF32, {n});
    first = t.raw();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % 4096, 0u);
    std::memset(t.raw(), 0x5a, t.nbytes());  // dirty every byte
  }
  EXPECT_GE(detail::large_block_cached_bytes(), size_t{12} << 20);
  // A request a little smaller falls in the same size class: the same block.
  Tensor again = Tensor::zeros(DType::kF32, {n - 1000});
  EXPECT_EQ(again.raw(), first);
  for (float v : again.span<float>()) ASSERT_EQ(v, 0.0f);
  EXPECT_EQ(detail::large_block_cached_bytes(), 0u);
}

TEST(HostBlocks, SizeClassesServeRequestsUpToAnEighthSmaller) {
  const size_t mb = size_t{1} << 20;
  EXPECT_EQ(detail::large_block_capacity(1), mb);  // the smallest large block
  EXPECT_EQ(detail::large_block_capacity(16 * mb), 16 * mb);
  EXPECT_EQ(detail::large_block_capacity(16 * mb + 1), 18 * mb);
  EXPECT_EQ(detail::large_block_capacity(18 * mb), 18 * mb);
  EXPECT_LE(detail::large_block_capacity(100 * mb), 100 * mb + 100 * mb / 8);
}

TEST(HostBlocks, TrimUnmapsTheCacheAndHostVectorsUseIt) {
  {
    HostVector<double> v(size_t{1} << 20, 1.5);  // 8 MiB
    EXPECT_EQ(v[12345], 1.5);
    HostVector<double> small(10, 2.0);  // below the threshold: operator new
    EXPECT_EQ(small[9], 2.0);
  }
  EXPECT_GE(detail::large_block_cached_bytes(), size_t{8} << 20);
  EXPECT_GE(detail::large_block_trim(), size_t{8} << 20);
  EXPECT_EQ(detail::large_block_cached_bytes(), 0u);
}

}  // namespace
}  // namespace hone

namespace hone::detail {
namespace {

TEST(BlockCache, KeepsByCapacityAndEvictsTheOldestToFit) {
  int a = 0, b = 0, c = 0, d = 0;
  BlockCache cache(300);
  EXPECT_TRUE(cache.give({&a, 100}).empty());
  EXPECT_TRUE(cache.give({&b, 100}).empty());
  EXPECT_TRUE(cache.give({&c, 100}).empty());
  EXPECT_EQ(cache.held(), 300u);
  // 150 more bytes: the two oldest go.
  const std::vector<Block> out = cache.give({&d, 150});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].p, &a);
  EXPECT_EQ(out[1].p, &b);
  EXPECT_EQ(cache.held(), 250u);
  // A block larger than the whole cache is handed straight back.
  const std::vector<Block> big = cache.give({&a, 301});
  ASSERT_EQ(big.size(), 1u);
  EXPECT_EQ(big[0].p, &a);
  EXPECT_EQ(cache.take(100), &c);
  EXPECT_EQ(cache.take(100), nullptr);
  EXPECT_EQ(cache.drain().size(), 1u);
  EXPECT_EQ(cache.held(), 0u);
  EXPECT_EQ(block_size_class(16u << 20), 16u << 20);
}

}  // namespace
}  // namespace hone::detail
