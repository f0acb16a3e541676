#include "core/host_blocks.h"

#include <sys/mman.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "hone/limits.h"

namespace hone::detail {
namespace {

constexpr size_t kMin = size_t{1} << 20;
constexpr size_t kHuge = size_t{2} << 20;  // a transparent huge page on x86-64 and arm64

/// Eight classes per doubling, at least 64 KiB apart: a block serves requests
/// up to 1/8 smaller than its capacity.
size_t size_class(size_t bytes) {
  const size_t step = std::max<size_t>(size_t{64} << 10, std::bit_floor(bytes) / 8);
  return (bytes + step - 1) / step * step;
}

size_t cache_limit() {
  if (const char* e = std::getenv("HONE_HOST_CACHE_MB"); e != nullptr && *e != '\0') {
    char* end = nullptr;
    const unsigned long long mb = std::strtoull(e, &end, 10);
    if (end != nullptr && *end == '\0') return static_cast<size_t>(mb) << 20;
  }
  const uint64_t phys = physical_memory_bytes();
  return static_cast<size_t>(std::min<uint64_t>(phys / 8, uint64_t{8} << 30));
}

void* map_block(size_t cap) {
  if (cap < kHuge) {
    void* p = ::mmap(nullptr, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? nullptr : p;
  }
  // Over-map by a huge page and cut both ends so the block starts on one.
  const size_t len = cap + kHuge;
  void* raw = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const auto a = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t start = (a + kHuge - 1) & ~(uintptr_t{kHuge} - 1);
  if (start > a) ::munmap(raw, start - a);
  if (const size_t tail = a + len - (start + cap); tail > 0)
    ::munmap(reinterpret_cast<void*>(start + cap), tail);
  void* p = reinterpret_cast<void*>(start);
  // Advice only: a kernel without transparent huge pages keeps small ones.
  (void)::madvise(p, cap, MADV_HUGEPAGE);
  return p;
}

struct Block {
  void* p;
  size_t cap;
};

struct Cache {
  std::mutex mu;
  std::vector<Block> blocks;  // oldest first
  size_t held = 0;
  const size_t limit = cache_limit();
};

Cache& cache() {
  static Cache* c = new Cache();  // never destroyed: tensors may outlive static destruction
  return *c;
}

void unmap_all(const std::vector<Block>& v) {
  for (const Block& b : v) ::munmap(b.p, b.cap);
}

}  // namespace

size_t large_block_min() {
  return kMin;
}

size_t large_block_capacity(size_t bytes) {
  return size_class(std::max(bytes, kMin));
}

void* large_block_take(size_t bytes, size_t* capacity, bool zero) {
  const size_t cap = large_block_capacity(bytes);
  *capacity = cap;
  Cache& c = cache();
  {
    std::unique_lock lock(c.mu);
    for (size_t i = c.blocks.size(); i-- > 0;) {  // the newest first: its pages are warmest
      if (c.blocks[i].cap != cap) continue;
      void* p = c.blocks[i].p;
      c.blocks.erase(c.blocks.begin() + static_cast<std::ptrdiff_t>(i));
      c.held -= cap;
      lock.unlock();
      if (zero) std::memset(p, 0, bytes);
      return p;
    }
  }
  if (void* p = map_block(cap)) return p;  // fresh pages read as zeros
  large_block_trim();  // the cache's blocks of other sizes may be what is missing
  return map_block(cap);
}

void large_block_give(void* p, size_t capacity) noexcept {
  if (p == nullptr) return;
  Cache& c = cache();
  if (capacity > c.limit) {
    ::munmap(p, capacity);
    return;
  }
  std::vector<Block> evicted;
  {
    std::lock_guard lock(c.mu);
    size_t drop = 0;
    while (drop < c.blocks.size() && c.held + capacity > c.limit) c.held -= c.blocks[drop++].cap;
    evicted.assign(c.blocks.begin(), c.blocks.begin() + static_cast<std::ptrdiff_t>(drop));
    c.blocks.erase(c.blocks.begin(), c.blocks.begin() + static_cast<std::ptrdiff_t>(drop));
    try {
      c.blocks.push_back({p, capacity});
      c.held += capacity;
    } catch (...) {  // no room for the entry: the block goes back to the system
      evicted.push_back({p, capacity});
    }
  }
  unmap_all(evicted);
}

size_t large_block_trim() noexcept {
  Cache& c = cache();
  std::vector<Block> all;
  size_t bytes = 0;
  {
    std::lock_guard lock(c.mu);
    all.swap(c.blocks);
    bytes = c.held;
    c.held = 0;
  }
  unmap_all(all);
  return bytes;
}

size_t large_block_cached_bytes() noexcept {
  Cache& c = cache();
  std::lock_guard lock(c.mu);
  return c.held;
}

}  // namespace hone::detail
