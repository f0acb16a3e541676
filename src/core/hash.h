// Content hashes: SHA-256 for everything that proves integrity (package
// checksums, model hashes, fingerprint and cache keys).
//
//   std::string h = hone::sha256_hex(bytes);   // 64 lower-case hex digits
//   if (h.empty()) ...                          // OpenSSL failed: never matches a real sum
#pragma once

#include <string>
#include <string_view>

namespace hone {

/// Lower-case hex SHA-256 of `bytes` (OpenSSL EVP). Empty only when OpenSSL
/// itself fails (out of memory), so a comparison still fails closed.
std::string sha256_hex(std::string_view bytes);

}  // namespace hone
