// Private to the aot backend: the weights blob next to a compiled library.
// A 64-byte header ("HONEAOTW", version, payload bytes, FNV-1a-64 of the
// payload), then the f32 payload. The generated library checks all of it at
// create; the checksum catches corruption, it is not a signature.
//
//   std::vector<uint8_t> blob = make_weights_blob(program.weights);
//   HONE_CHECK_OK(write_file_atomic(dir / "weights.bin", blob));
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace hone::aot {

uint64_t fnv1a64(const void* data, size_t bytes);
std::vector<uint8_t> make_weights_blob(const std::vector<float>& payload);

}  // namespace hone::aot
