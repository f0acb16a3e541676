// Signed packages: an Ed25519 signature (OpenSSL EVP) over a package's
// checksums.json, which holds the SHA-256 of every entry, so it vouches for
// all of them. Native code in a package (aot's model.so) is loaded only when
// a trusted key signed it; see LoadOptions in package.h.
//
//   HONE_CHECK_OK(hone::generate_signing_key("me.key"));   // me.key + me.key.pub
//   HONE_TRY(std::string id, hone::sign_package("m.hone", "me.key"));
//   HONE_TRY(auto s, hone::check_package_signature("m.hone", {"me.key.pub"}));
//
// Trusted keys are public-key PEM files given by path (--trust-key FILE) or
// found in the keys folder: $HONE_TRUSTED_KEYS, else
// ~/.config/hone/trusted-keys/ (every *.pub in it).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "hone/error.h"

namespace hone {

/// Writes a new Ed25519 private key to `private_key` (PEM, mode 0600, must
/// not exist) and its public key to `private_key` + ".pub". Returns the key
/// id (16 hex digits of the SHA-256 of the raw public key).
[[nodiscard]] Result<std::string> generate_signing_key(const std::filesystem::path& private_key);

/// Signs `package` in place (atomically, replacing any older signature)
/// after verifying it whole. Returns the signing key's id.
[[nodiscard]] Result<std::string> sign_package(const std::filesystem::path& package,
                                               const std::filesystem::path& private_key);

/// What a package's signature says.
struct SignatureStatus {
  bool is_signed = false;  // it has a signature.json, and that signature verifies
  bool trusted = false;    // ... by one of the trusted keys
  std::string key_id;      // the signing key's id
  std::string trusted_by;  // the trusted key file that matched
};

/// The trusted keys: `explicit_keys`, then the keys folder's *.pub files.
std::vector<std::filesystem::path> trusted_key_files(
    const std::vector<std::filesystem::path>& explicit_keys);

/// Verifies `package` whole and its signature. Errors: the package's own
/// (kCorrupt ...); kCorrupt when a signature is there but malformed or does
/// not verify (the package was altered after signing); kInvalidArgument for
/// an unreadable trusted key file. An unsigned package is not an error.
[[nodiscard]] Result<SignatureStatus> check_package_signature(
    const std::filesystem::path& package, const std::vector<std::filesystem::path>& trusted_keys);

}  // namespace hone
