#include "backends/cuda/device_pool.h"

#include <algorithm>
#include <vector>

#include "core/block_cache.h"

namespace hone::cuda {
namespace {

/// The free blocks; never destroyed (owners may outlive static destruction).
detail::BlockCache& device_free() {
  static auto* c = new detail::BlockCache(size_t{1} << 30);
  return *c;
}

void free_device(const Driver& d, const std::vector<detail::Block>& v) {
  if (v.empty()) return;
  (void)d.make_current();  // a thread that never ran CUDA may drop the last owner
  for (const detail::Block& b : v) (void)d.api().cuMemFree(reinterpret_cast<CUdeviceptr>(b.p));
}

}  // namespace

Result<std::shared_ptr<void>> DevicePool::take(const Driver& d, size_t bytes) {
  if (bytes == 0) return std::shared_ptr<void>();
  const size_t cap = detail::block_size_class(std::max<size_t>(bytes, 4096));
  void* p = device_free().take(cap);
  if (p == nullptr) {
    HONE_CHECK_OK(d.make_current());
    CUdeviceptr ptr = 0;
    if (d.api().cuMemAlloc(&ptr, cap) != 0) {
      trim(d);  // free blocks of other sizes may be what the device is short of
      HONE_CHECK_OK(d.allocate(&ptr, cap));
    }
    p = reinterpret_cast<void*>(ptr);
  }
  const Driver* dp = &d;
  return std::shared_ptr<void>(p, [dp, cap](void* q) {
    free_device(*dp, device_free().give({q, cap}));
  });
}

size_t DevicePool::trim(const Driver& d) {
  const std::vector<detail::Block> all = device_free().drain();
  size_t bytes = 0;
  for (const detail::Block& b : all) bytes += b.cap;
  free_device(d, all);
  return bytes;
}

}  // namespace hone::cuda
