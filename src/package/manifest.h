// The schema of a package's manifest.json, checked field by field before any
// field is used, so a hostile manifest is an error naming the field (never a
// JSON exception, an absurd thread count or a crash).
//
//   HONE_TRY(nlohmann::json m, package::parse_manifest(bytes));   // checked
//   const int threads = m["threads"].get<int>();                   // safe now
//
// Internal to src/package.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "hone/error.h"

namespace hone::package {

/// The manifest format this build writes and the newest it reads.
inline constexpr int kManifestVersion = 1;

/// Parses manifest.json and checks every field hone reads: types, ranges
/// (format_version 1..kManifestVersion, threads 0..kMaxThreads,
/// batch sizes >= 1), the model hash as 64 hex digits, figures as numbers.
/// Errors: kCorrupt "manifest.json: field 'decision.figures[0].p50_ms' must be
/// a number, not a string"; kUnsupported for a newer format_version.
[[nodiscard]] Result<nlohmann::json> parse_manifest(std::string_view text);

}  // namespace hone::package
