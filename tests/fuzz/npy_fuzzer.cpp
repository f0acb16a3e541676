// libFuzzer target: arbitrary bytes as a .npy file. parse_npy must return a
// tensor or an Error; what parses must serialize and parse back the same.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "hone/limits.h"
#include "hone/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool budget = (hone::set_memory_budget(uint64_t{256} << 20), true);
  (void)budget;
  auto t = hone::parse_npy(std::span<const uint8_t>(data, size), "fuzz.npy");
  if (!t) {
    (void)t.error().to_string();
    return 0;
  }
  auto bytes = hone::serialize_npy(*t);
  if (!bytes) return 0;
  auto back = hone::parse_npy(*bytes, "round-trip.npy");
  if (!back || back->shape() != t->shape() || back->nbytes() != t->nbytes() ||
      (t->nbytes() > 0 && std::memcmp(back->raw(), t->raw(), t->nbytes()) != 0))
    __builtin_trap();  // a round trip that changes the tensor is a bug
  return 0;
}
