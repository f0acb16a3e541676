#include "core/host_blocks.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/block_cache.h"
#include "hone/limits.h"

namespace hone::detail {
namespace {

constexpr size_t kMin = size_t{1} << 20;
constexpr size_t kHuge = size_t{2} << 20;  // a transparent huge page on x86-64 and arm64

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

BlockCache& cache() {
  // Never destroyed: tensors may outlive static destruction.
  static BlockCache* c = new BlockCache(cache_limit());
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
  return block_size_class(std::max(bytes, kMin));
}

void* large_block_take(size_t bytes, size_t* capacity, bool zero) {
  const size_t cap = large_block_capacity(bytes);
  *capacity = cap;
  if (void* p = cache().take(cap)) {
    if (zero) std::memset(p, 0, bytes);
    return p;
  }
  if (void* p = map_block(cap)) return p;  // fresh pages read as zeros
  large_block_trim();  // the cache's blocks of other sizes may be what is missing
  return map_block(cap);
}

void large_block_give(void* p, size_t capacity) noexcept {
  if (p != nullptr) unmap_all(cache().give({p, capacity}));
}

size_t large_block_trim() noexcept {
  const std::vector<Block> all = cache().drain();
  unmap_all(all);
  size_t bytes = 0;
  for (const Block& b : all) bytes += b.cap;
  return bytes;
}

size_t large_block_cached_bytes() noexcept {
  return cache().held();
}

}  // namespace hone::detail
