// The .hone container: a stored (uncompressed) zip of named byte blobs with a
// SHA-256 for each, written atomically and verified whole when read.
//
//   std::vector<package::Entry> e = {{"manifest.json", text}, {"model.onnx", bytes}};
//   HONE_CHECK_OK(package::write_archive("m.hone", std::move(e)));
//   HONE_TRY(auto entries, package::read_archive("m.hone"));   // verified, sorted
//
// This layer knows nothing of manifests or backends: it stores bytes under
// safe relative paths and proves they come back unchanged. The same entries
// always give the same file bytes (sorted, fixed timestamps, no compression),
// so a package is reproducible and diffable by hash.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hone/error.h"

namespace hone::package {

/// One file inside a package. `path` is relative and '/'-separated
/// ("backend/plan.bin"); `bytes` is its content.
struct Entry {
  std::string path;
  std::string bytes;

  friend bool operator==(const Entry&, const Entry&) = default;
};

/// The container format version this build writes and the newest it reads.
inline constexpr int kFormatVersion = 1;
/// The name of the entry write_archive adds and read_archive consumes.
inline constexpr std::string_view kChecksumsEntry = "checksums.json";
/// The optional entry holding a signature over checksums.json (see
/// signing.h); like checksums.json it is not listed in checksums.json.
inline constexpr std::string_view kSignatureEntry = "signature.json";
/// Infix of the temporary files write_archive creates next to its target
/// ("model.hone.hone-tmp-<pid>-<random>"); they never end in ".hone".
inline constexpr std::string_view kTempInfix = ".hone-tmp-";

/// Writes `file` atomically: the archive is built in memory, written to a
/// uniquely named temporary file in the same folder, fsync'ed, and renamed
/// over `file`; on any failure the temporary is removed and an existing
/// `file` is untouched. Entries are stored (no compression), sorted by path,
/// with fixed timestamps, so the same entries give the same bytes. Adds
/// "checksums.json": {"format": "hone-package", "sha256": {path: hex, ...},
/// "version": kFormatVersion}. Before writing, removes stale temporaries of
/// the same target left by a killed writer (writer pid gone, or untouched for
/// a minute).
/// Errors: kInvalidArgument for an entry path that is absolute, contains ".."
/// or "." segments, backslashes, empty segments, control characters, is
/// "checksums.json", or is a duplicate (the message names it); kIo when the
/// folder is missing or a write fails.
/// `signature`, when given, is stored as signature.json (outside the sums).
[[nodiscard]] Result<void> write_archive(const std::filesystem::path& file,
                                         std::vector<Entry> entries,
                                         std::optional<std::string> signature = std::nullopt);

/// The checksums.json text write_archive stores for `entries` (without
/// checksums.json and signature.json): what a signature signs.
std::string checksums_text(std::vector<Entry> entries);

/// A verified package with what read_archive drops: the checksums.json text
/// (verified against every entry) and signature.json, if there is one
/// (not verified here: see signing.h).
struct ArchiveContents {
  std::vector<Entry> entries;
  std::string checksums;
  std::optional<std::string> signature;
};
[[nodiscard]] Result<ArchiveContents> read_archive_contents(const std::filesystem::path& file);

/// Opens and verifies a package. Errors, each naming the file and, where one
/// is at fault, the entry: kNotFound when the file is missing; kCorrupt when it
/// is not a readable zip ("not a hone package or truncated"), an entry path is
/// unsafe or duplicated, an entry fails its CRC or SHA-256, an entry is not
/// listed in checksums.json or a listed one is missing, or checksums.json is
/// missing or malformed; kUnsupported when the format version is newer than
/// kFormatVersion (naming both). Returns the entries without checksums.json,
/// sorted by path.
[[nodiscard]] Result<std::vector<Entry>> read_archive(const std::filesystem::path& file);

/// Why `path` is not a safe entry path, or empty when it is. Safe: relative,
/// '/'-separated, no empty, "." or ".." segments, no backslash or control
/// characters.
std::string entry_path_problem(std::string_view path);

/// Writes every entry whose path starts with `prefix` (a folder such as
/// "backend/", a missing trailing '/' is added; "" for all) under `dir`, without the prefix,
/// creating folders. Errors: kInvalidArgument for an unsafe path or prefix, kIo on write failure.
[[nodiscard]] Result<void> extract_entries(const std::vector<Entry>& entries,
                                           std::string_view prefix,
                                           const std::filesystem::path& dir);

/// Reads every regular file under `dir` (recursively) as entries named
/// `prefix` (trailing '/' added when missing) + its relative path, sorted by path. Errors:
/// kNotFound when `dir` is missing, kUnsupported for a symbolic link or special file (named),
/// kInvalidArgument for a name that is not a safe entry path, kIo on read failure.
[[nodiscard]] Result<std::vector<Entry>> collect_entries(const std::filesystem::path& dir,
                                                         std::string_view prefix);

}  // namespace hone::package
