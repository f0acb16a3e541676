// SHA-256, the one integrity hash of hone: package entries, model hashes,
// exported files, saved backend state and signatures all use it.
//
//   std::string hex = hone::sha256_hex(bytes);   // 64 lower-case hex digits
//
// Thread-safe (OpenSSL EVP, no shared state).
#pragma once

#include <string>
#include <string_view>

namespace hone {

/// Lower-case hex SHA-256 of `bytes`; empty only if OpenSSL fails (out of
/// memory), which then matches no stored sum, so a check fails closed.
std::string sha256_hex(std::string_view bytes);

/// True for 64 lower-case hex digits.
bool is_sha256_hex(std::string_view text);

}  // namespace hone
