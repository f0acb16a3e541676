// Internal to src/package: the signature check on an archive already read,
// shared by hone::load (which decides whether native code may run) and
// hone::check_package_signature.
#pragma once

#include <filesystem>
#include <vector>

#include "hone/signing.h"
#include "package/archive.h"

namespace hone::package {

[[nodiscard]] Result<SignatureStatus> verify_signature(
    const ArchiveContents& contents, const std::vector<std::filesystem::path>& trusted_keys);

/// True when `bytes` is an ELF object (a shared library, an executable).
bool is_native_code(std::string_view bytes);

}  // namespace hone::package
