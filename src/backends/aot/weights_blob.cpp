#include "backends/aot/weights_blob.h"

#include <cstring>

namespace hone::aot {

uint64_t fnv1a64(const void* data, size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t h = 1469598103934665603ULL;
  for (size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ULL;
  return h;
}

std::vector<uint8_t> make_weights_blob(const std::vector<float>& payload) {
  const uint64_t bytes = payload.size() * sizeof(float);
  std::vector<uint8_t> blob(64 + bytes, 0);
  std::memcpy(blob.data(), "HONEAOTW", 8);
  const uint32_t version = 1;
  std::memcpy(blob.data() + 8, &version, 4);
  const uint64_t hash = fnv1a64(payload.data(), bytes);
  std::memcpy(blob.data() + 16, &bytes, 8);
  std::memcpy(blob.data() + 24, &hash, 8);
  if (bytes) std::memcpy(blob.data() + 64, payload.data(), bytes);
  return blob;
}

}  // namespace hone::aot
