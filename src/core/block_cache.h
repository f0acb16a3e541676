// Freed memory blocks kept for reuse (core-internal): the large host blocks
// of core/host_blocks.cpp (mapped memory) and the cuda backend's page-locked
// blocks (PinnedPool) keep theirs in one of these and release what it hands
// back.
//
//   BlockCache cache(limit);
//   const size_t cap = block_size_class(bytes);
//   void* p = cache.take(cap);                      // nullptr: none kept, allocate one
//   for (Block b : cache.give({p, cap})) release(b);  // the evicted, or p itself
#pragma once

#include <cstddef>
#include <mutex>
#include <vector>

namespace hone::detail {

/// A block and its capacity (its size class).
struct Block {
  void* p;
  size_t cap;
};

/// The size class serving `bytes`: eight classes per doubling, at least
/// 64 KiB apart, so a block serves requests up to 1/8 smaller than itself.
size_t block_size_class(size_t bytes);

/// Blocks kept by capacity, at most `limit` bytes in all; the oldest go first
/// when a newer one must fit. Thread-safe. The cache never frees memory: the
/// caller releases the blocks give() and drain() return.
class BlockCache {
 public:
  explicit BlockCache(size_t limit) : limit_(limit) {}
  /// The newest kept block of capacity `cap` (its pages are warmest), no
  /// longer kept; nullptr when there is none.
  void* take(size_t cap);
  /// Keeps `b`; returns the blocks to release now: those evicted to make
  /// room, or `b` itself when it cannot be kept.
  std::vector<Block> give(Block b) noexcept;
  /// Every kept block, no longer kept.
  std::vector<Block> drain() noexcept;
  /// The bytes kept.
  size_t held() const;

 private:
  mutable std::mutex mu_;
  std::vector<Block> blocks_;  // oldest first
  size_t held_ = 0;
  const size_t limit_;
};

}  // namespace hone::detail
