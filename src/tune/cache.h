// The tuning cache: measured figures of (graph, backend config, input shapes,
// machine) kept in a SQLite database, so tuning the same model again skips
// measuring what was already measured.
//
//   HONE_TRY(TuningCache cache, TuningCache::open(TuningCache::default_path()));
//   HONE_TRY(std::optional<std::string> figures, cache.lookup(key));   // JSON text or miss
//   if (!figures) HONE_CHECK_OK(cache.store(key, measured_json));
//
// Several processes may share one database (WAL mode, a busy timeout, one
// transaction per write). A file that is not a usable cache is never an
// error the user must fix by hand: it is moved aside with a warning and
// recreated.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "hone/error.h"

namespace hone {

/// What measured figures depend on. Every field is an opaque string the
/// tuner builds; graph_hash, backend and fingerprint must not be empty.
struct CacheKey {
  std::string graph_hash;   // hash of the graph as tuned
  std::string backend;      // backend name
  std::string config_key;   // the backend config's stable key
  std::string shapes;       // input shapes measured ("x:1x3x224x224")
  std::string fingerprint;  // Fingerprint::key() of the machine (tune/machine.h)
};

/// A handle on one cache database. Movable, not copyable. Calls on one
/// handle must not overlap (open one handle per thread); handles in any
/// number of threads or processes may share the file.
class TuningCache {
 public:
  /// Opens or creates the database, creating parent folders. A file that is
  /// not a usable SQLite database, fails SQLite's quick_check, or has another
  /// schema is logged as a warning naming the file, moved aside to
  /// "<file>.corrupt-<time>" (with its -wal/-shm files), and recreated.
  /// Opening takes an flock on "<file>.lock" (created next to it, left in
  /// place) so that concurrent processes never rebuild the same file twice.
  /// Errors: kIo only when no database can be created at `file` (permission,
  /// missing disk space, a folder in the way).
  [[nodiscard]] static Result<TuningCache> open(const std::filesystem::path& file);

  /// $HONE_CACHE_DIR/tuning.db, else $XDG_CACHE_HOME/hone/tuning.db, else
  /// ~/.cache/hone/tuning.db (the temp folder when there is no $HOME).
  static std::filesystem::path default_path();

  /// The figures stored for `key` as JSON text, or nullopt on a miss. A
  /// database found corrupt here is rebuilt (with a warning) and the lookup
  /// is a miss. Errors: kInvalidArgument for an empty required key field,
  /// kIo when the database stays locked past the busy timeout or cannot be read.
  [[nodiscard]] Result<std::optional<std::string>> lookup(const CacheKey& key) const;

  /// Inserts or replaces the figures (must be valid JSON) for `key`, in one
  /// transaction. A database found corrupt is rebuilt and the store retried.
  /// Errors: kInvalidArgument for an empty key field or text that is not
  /// JSON, kIo when locked past the busy timeout or the write fails.
  [[nodiscard]] Result<void> store(const CacheKey& key, const std::string& figures_json);

  /// Number of entries. Errors: kIo.
  [[nodiscard]] Result<int64_t> size() const;
  /// Removes every entry (`hone cache clear`). Errors: kIo.
  [[nodiscard]] Result<void> clear();
  /// Runs SQLite's full integrity_check. Errors: kCorrupt with its report.
  [[nodiscard]] Result<void> check() const;

  const std::filesystem::path& path() const;

  TuningCache(TuningCache&&) noexcept;
  TuningCache& operator=(TuningCache&&) noexcept;
  ~TuningCache();

 private:
  struct Db;
  explicit TuningCache(std::unique_ptr<Db> db);
  // Behind a pointer so sqlite3.h stays out of this header; mutable state
  // because a lookup may have to rebuild a corrupt database.
  std::unique_ptr<Db> db_;
};

}  // namespace hone
