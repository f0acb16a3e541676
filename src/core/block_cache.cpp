#include "core/block_cache.h"

#include <algorithm>
#include <bit>

namespace hone::detail {

size_t block_size_class(size_t bytes) {
  const size_t step = std::max<size_t>(size_t{64} << 10, std::bit_floor(bytes) / 8);
  return (bytes + step - 1) / step * step;
}

void* BlockCache::take(size_t cap) {
  std::lock_guard lock(mu_);
  for (size_t i = blocks_.size(); i-- > 0;) {
    if (blocks_[i].cap != cap) continue;
    void* p = blocks_[i].p;
    blocks_.erase(blocks_.begin() + static_cast<std::ptrdiff_t>(i));
    held_ -= cap;
    return p;
  }
  return nullptr;
}

std::vector<Block> BlockCache::give(Block b) noexcept {
  std::vector<Block> release;
  try {
    if (b.cap > limit_) {
      release.push_back(b);
      return release;
    }
    std::lock_guard lock(mu_);
    size_t drop = 0, freed = 0;
    while (drop < blocks_.size() && held_ - freed + b.cap > limit_) freed += blocks_[drop++].cap;
    release.reserve(drop);  // may throw: nothing has changed yet
    blocks_.push_back(b);   // likewise
    release.assign(blocks_.begin(), blocks_.begin() + static_cast<std::ptrdiff_t>(drop));
    blocks_.erase(blocks_.begin(), blocks_.begin() + static_cast<std::ptrdiff_t>(drop));
    held_ = held_ - freed + b.cap;
  } catch (...) {  // no room for the bookkeeping: b goes back to the system
    release.clear();
    try {
      release.push_back(b);
    } catch (...) {  // not even that: b stays mapped until the process ends
    }
  }
  return release;
}

std::vector<Block> BlockCache::drain() noexcept {
  std::lock_guard lock(mu_);
  std::vector<Block> all;
  all.swap(blocks_);
  held_ = 0;
  return all;
}

size_t BlockCache::held() const {
  std::lock_guard lock(mu_);
  return held_;
}

}  // namespace hone::detail
