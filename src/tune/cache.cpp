#include "tune/cache.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>
#include <system_error>
#include <utility>
#include <vector>

#include "core/log.h"

namespace hone {
namespace {

namespace fs = std::filesystem;

// "HONE" in PRAGMA application_id marks the file as ours; user_version is
// the schema version. A database with anything else is not a usable cache.
constexpr int32_t kApplicationId = 0x484f4e45;
constexpr int kSchemaVersion = 1;
// Long enough to ride out another process's write (a row or a rebuild),
// short enough that a stuck peer shows up as an error rather than a hang.
constexpr int kBusyTimeoutMs = 10000;

constexpr const char* kCreateSchema = R"sql(
CREATE TABLE figures (
  graph_hash  TEXT NOT NULL,
  backend     TEXT NOT NULL,
  config_key  TEXT NOT NULL,
  shapes      TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  figures     TEXT NOT NULL,
  stored_at   INTEGER NOT NULL,
  PRIMARY KEY (graph_hash, backend, config_key, shapes, fingerprint)
) WITHOUT ROWID;
)sql";

}  // namespace

// Outside the anonymous namespace: TuningCache::Db holds a Conn.
struct ConnCloser {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
using Conn = std::unique_ptr<sqlite3, ConnCloser>;

namespace {

struct StmtFinalizer {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using Stmt = std::unique_ptr<sqlite3_stmt, StmtFinalizer>;

bool is_corruption(int rc) {
  const int primary = rc & 0xff;
  return primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB;
}

std::string quoted(const fs::path& p) {
  return "'" + p.string() + "'";
}

/// A failed SQLite call: kCorrupt when the file is damaged (the caller
/// rebuilds), kIo for everything else (locked, permission, disk full).
Error sqlite_error(sqlite3* db, int rc, const fs::path& file, std::string_view doing) {
  const ErrorCode code = is_corruption(rc) ? ErrorCode::kCorrupt : ErrorCode::kIo;
  std::string why = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  if ((rc & 0xff) == SQLITE_BUSY) {
    why += " (another process held it for " + std::to_string(kBusyTimeoutMs / 1000) + " s)";
  }
  return Error(code,
               "tuning cache " + quoted(file) + ": cannot " + std::string(doing) + ": " + why);
}

Result<Stmt> prepare(sqlite3* db, const fs::path& file, std::string_view sql) {
  sqlite3_stmt* raw = nullptr;
  const int rc = sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &raw, nullptr);
  Stmt stmt(raw);
  if (rc != SQLITE_OK)
    return fail(sqlite_error(db, rc, file, "prepare '" + std::string(sql) + "'"));
  return stmt;
}

/// Runs `sql` and returns the first column of its first row ("" when none).
Result<std::string> query_text(sqlite3* db, const fs::path& file, std::string_view sql) {
  HONE_TRY(Stmt stmt, prepare(db, file, sql));
  const int rc = sqlite3_step(stmt.get());
  if (rc == SQLITE_DONE) return std::string();
  if (rc != SQLITE_ROW) return fail(sqlite_error(db, rc, file, "run '" + std::string(sql) + "'"));
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt.get(), 0));
  return std::string(text != nullptr ? text : "");
}

Result<void> exec(sqlite3* db, const fs::path& file, const char* sql) {
  const int rc = sqlite3_exec(db, sql, nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return fail(sqlite_error(db, rc, file, std::string("run '") + sql + "'"));
  return {};
}

/// Serialises opening, creating and rebuilding among processes: an flock on
/// "<file>.lock", released when this goes out of scope. SQLite's own locks
/// cover reads and writes; they do not cover "two processes find the file
/// corrupt and both move it aside", nor the switch into WAL mode, which
/// ignores the busy timeout.
class OpenLock {
 public:
  static Result<OpenLock> take(const fs::path& file) {
    const fs::path lock = file.string() + ".lock";
    const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0) {
      return fail(ErrorCode::kIo, "tuning cache: cannot open lock file " + quoted(lock) + ": " +
                                      std::strerror(errno));
    }
    OpenLock held(fd);
    int rc;
    while ((rc = ::flock(fd, LOCK_EX)) != 0 && errno == EINTR) {
    }
    if (rc != 0) {
      return fail(ErrorCode::kIo,
                  "tuning cache: cannot lock " + quoted(lock) + ": " + std::strerror(errno));
    }
    return held;
  }
  OpenLock(OpenLock&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  OpenLock& operator=(OpenLock&&) = delete;
  ~OpenLock() {
    if (fd_ >= 0) ::close(fd_);  // closing drops the flock
  }

 private:
  explicit OpenLock(int fd) : fd_(fd) {}
  int fd_;
};

/// Opens `file` as a cache, creating the schema in a new database. A kCorrupt
/// error means the file is not a usable cache (rebuild it); kIo means it
/// could not even be tried (leave it alone).
Result<Conn> open_connection(const fs::path& file) {
  sqlite3* raw = nullptr;
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX;
  int rc = sqlite3_open_v2(file.c_str(), &raw, flags, nullptr);
  Conn db(raw);
  if (rc != SQLITE_OK) return fail(sqlite_error(db.get(), rc, file, "open"));
  sqlite3_extended_result_codes(db.get(), 1);
  sqlite3_busy_timeout(db.get(), kBusyTimeoutMs);

  // The first statement that reads the header is where a file of garbage
  // shows (SQLITE_NOTADB).
  HONE_TRY(std::string mode, query_text(db.get(), file, "PRAGMA journal_mode=WAL"));
  if (mode != "wal") {
    return fail(ErrorCode::kIo, "tuning cache " + quoted(file) +
                                    ": cannot switch to WAL mode (journal mode is '" + mode + "')");
  }
  HONE_CHECK_OK(exec(db.get(), file, "PRAGMA synchronous=NORMAL"));
  HONE_TRY(std::string check, query_text(db.get(), file, "PRAGMA quick_check"));
  if (check != "ok") {
    return fail(ErrorCode::kCorrupt,
                "tuning cache " + quoted(file) + ": quick_check reports: " + check);
  }
  HONE_TRY(std::string app_id, query_text(db.get(), file, "PRAGMA application_id"));
  HONE_TRY(std::string version, query_text(db.get(), file, "PRAGMA user_version"));
  HONE_TRY(std::string tables, query_text(db.get(), file, "SELECT count(*) FROM sqlite_master"));
  if (app_id == "0" && version == "0" && tables == "0") {
    HONE_CHECK_OK(exec(db.get(), file, "BEGIN IMMEDIATE"));
    auto created = exec(db.get(), file, kCreateSchema);
    if (created) {
      const std::string pragmas = "PRAGMA application_id=" + std::to_string(kApplicationId) +
                                  "; PRAGMA user_version=" + std::to_string(kSchemaVersion);
      created = exec(db.get(), file, pragmas.c_str());
    }
    if (created) created = exec(db.get(), file, "COMMIT");
    if (!created) {
      (void)exec(db.get(), file, "ROLLBACK");
      return fail(std::move(created).error());
    }
    HONE_LOG_DEBUG("tuning cache: created '{}'", file.string());
    return db;
  }
  if (app_id != std::to_string(kApplicationId) || version != std::to_string(kSchemaVersion)) {
    return fail(ErrorCode::kCorrupt, "tuning cache " + quoted(file) +
                                         " is not a hone tuning cache of schema version " +
                                         std::to_string(kSchemaVersion) + " (application_id " +
                                         app_id + ", user_version " + version + ")");
  }
  HONE_TRY(std::string table,
           query_text(db.get(), file,
                      "SELECT count(*) FROM sqlite_master WHERE type='table' AND name='figures'"));
  if (table != "1") {
    return fail(ErrorCode::kCorrupt, "tuning cache " + quoted(file) + " has no 'figures' table");
  }
  return db;
}

std::string time_stamp() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

/// Moves the database and its WAL and shared-memory files aside. The WAL must
/// go too: SQLite would replay a stale one into the fresh database.
void move_aside(const fs::path& file, const std::string& why) {
  std::string aside = file.string() + ".corrupt-" + time_stamp();
  std::error_code ec;
  if (fs::exists(aside, ec)) aside += "-" + std::to_string(::getpid());
  fs::rename(file, aside, ec);
  if (ec) {
    HONE_LOG_WARN("tuning cache: cannot move {} aside ({}); removing it", quoted(file),
                  ec.message());
    fs::remove(file, ec);
  }
  for (const char* suffix : {"-wal", "-shm", "-journal"}) {
    const fs::path side = file.string() + suffix;
    if (!fs::exists(side, ec)) continue;
    fs::rename(side, aside + suffix, ec);
    if (ec) fs::remove(side, ec);
  }
  HONE_LOG_WARN("tuning cache {} was unusable ({}); moved it to '{}' and started a new one",
                quoted(file), why, aside);
}

/// Opens `file`, rebuilding it when it is not a usable cache. The caller
/// holds the OpenLock.
Result<Conn> open_or_rebuild_locked(const fs::path& file) {
  auto db = open_connection(file);
  if (db || db.error().code() != ErrorCode::kCorrupt) return db;
  move_aside(file, db.error().message());
  return open_connection(file);
}

/// Which file a path names now, to tell "our database" from "one another
/// process has already put in its place".
std::pair<dev_t, ino_t> file_identity(const fs::path& file) {
  struct stat st;
  if (::stat(file.c_str(), &st) != 0) return {0, 0};
  return {st.st_dev, st.st_ino};
}

Result<void> check_key(const CacheKey& key) {
  const std::pair<const char*, const std::string*> required[] = {{"graph_hash", &key.graph_hash},
                                                                 {"backend", &key.backend},
                                                                 {"fingerprint", &key.fingerprint}};
  for (const auto& [name, value] : required) {
    if (value->empty()) {
      return fail(ErrorCode::kInvalidArgument,
                  std::string("tuning cache key: ") + name + " is empty");
    }
  }
  return {};
}

Result<void> bind_key(sqlite3* db, sqlite3_stmt* stmt, const fs::path& file, const CacheKey& key) {
  const std::string* fields[] = {&key.graph_hash, &key.backend, &key.config_key, &key.shapes,
                                 &key.fingerprint};
  for (int i = 0; i < 5; ++i) {
    const int rc = sqlite3_bind_text(stmt, i + 1, fields[i]->data(),
                                     static_cast<int>(fields[i]->size()), SQLITE_TRANSIENT);
    if (rc != SQLITE_OK) return fail(sqlite_error(db, rc, file, "bind a key"));
  }
  return {};
}

}  // namespace

struct TuningCache::Db {
  fs::path file;
  Conn conn;
  std::pair<dev_t, ino_t> identity;

  Result<sqlite3*> handle() const {
    if (!conn) return fail(ErrorCode::kIo, "tuning cache " + quoted(file) + " is not open");
    return conn.get();
  }

  /// Replaces a connection found corrupt mid-use with a rebuilt database.
  Result<void> rebuild(const Error& why) {
    conn.reset();
    HONE_TRY(OpenLock lock, OpenLock::take(file));
    // Still the file we found corrupt: move it aside, even when it passes
    // quick_check (a query found damage quick_check does not look for).
    // Another file: a peer rebuilt it already; use it unless it is unusable too.
    if (file_identity(file) == identity) move_aside(file, why.message());
    auto reopened = open_connection(file);
    if (!reopened && reopened.error().code() == ErrorCode::kCorrupt) {
      move_aside(file, reopened.error().message());
      reopened = open_connection(file);
    }
    if (!reopened) return fail(std::move(reopened).error());
    conn = std::move(*reopened);
    identity = file_identity(file);
    return {};
  }
};

TuningCache::TuningCache(std::unique_ptr<Db> db) : db_(std::move(db)) {}
TuningCache::TuningCache(TuningCache&&) noexcept = default;
TuningCache& TuningCache::operator=(TuningCache&&) noexcept = default;
TuningCache::~TuningCache() = default;

const fs::path& TuningCache::path() const {
  return db_->file;
}

Result<TuningCache> TuningCache::open(const fs::path& file) {
  std::error_code ec;
  if (file.has_parent_path()) {
    fs::create_directories(file.parent_path(), ec);
    if (ec) {
      return fail(ErrorCode::kIo, "tuning cache: cannot create folder " +
                                      quoted(file.parent_path()) + ": " + ec.message());
    }
  }
  if (fs::is_directory(file, ec)) {
    return fail(ErrorCode::kIo, "tuning cache " + quoted(file) + " is a folder");
  }
  auto db = std::make_unique<Db>();
  db->file = file;
  {
    // Identity read under the lock, so it names the file this connection has.
    HONE_TRY(OpenLock lock, OpenLock::take(file));
    HONE_TRY(db->conn, open_or_rebuild_locked(file));
    db->identity = file_identity(file);
  }
  return TuningCache(std::move(db));
}

fs::path TuningCache::default_path() {
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v != nullptr ? v : "";
  };
  if (const std::string dir = env("HONE_CACHE_DIR"); !dir.empty())
    return fs::path(dir) / "tuning.db";
  // The XDG spec says to ignore a relative XDG_CACHE_HOME.
  if (const std::string xdg = env("XDG_CACHE_HOME"); !xdg.empty() && xdg.front() == '/') {
    return fs::path(xdg) / "hone" / "tuning.db";
  }
  if (const std::string home = env("HOME"); !home.empty()) {
    return fs::path(home) / ".cache" / "hone" / "tuning.db";
  }
  std::error_code ec;
  const fs::path tmp = fs::temp_directory_path(ec);
  return (ec ? fs::path("/tmp") : tmp) / "hone-cache" / "tuning.db";
}

Result<std::optional<std::string>> TuningCache::lookup(const CacheKey& key) const {
  HONE_CHECK_OK(check_key(key));
  const fs::path& file = db_->file;
  auto attempt = [&]() -> Result<std::optional<std::string>> {
    HONE_TRY(sqlite3 * db, db_->handle());
    HONE_TRY(Stmt stmt,
             prepare(db, file,
                     "SELECT figures FROM figures WHERE graph_hash=?1 AND backend=?2 AND "
                     "config_key=?3 AND shapes=?4 AND fingerprint=?5"));
    HONE_CHECK_OK(bind_key(db, stmt.get(), file, key));
    const int rc = sqlite3_step(stmt.get());
    if (rc == SQLITE_DONE) return std::nullopt;
    if (rc != SQLITE_ROW) return fail(sqlite_error(db, rc, file, "look up figures"));
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt.get(), 0));
    std::string figures(text != nullptr ? text : "");
    if (!nlohmann::json::accept(figures)) {
      HONE_LOG_WARN("tuning cache {}: stored figures for {} are not JSON; treated as a miss",
                    quoted(file), key.backend);
      return std::nullopt;
    }
    return figures;
  };
  auto found = attempt();
  if (found || found.error().code() != ErrorCode::kCorrupt) {
    HONE_LOG_DEBUG("tuning cache: {} for {} {} [{}]", found && *found ? "hit" : "miss", key.backend,
                   key.config_key, key.shapes);
    return found;
  }
  HONE_CHECK_OK(db_->rebuild(found.error()));
  return std::nullopt;  // a fresh database holds nothing
}

Result<void> TuningCache::store(const CacheKey& key, const std::string& figures_json) {
  HONE_CHECK_OK(check_key(key));
  if (!nlohmann::json::accept(figures_json)) {
    return fail(ErrorCode::kInvalidArgument,
                "tuning cache: figures for " + key.backend + " are not valid JSON");
  }
  const fs::path& file = db_->file;
  auto attempt = [&]() -> Result<void> {
    HONE_TRY(sqlite3 * db, db_->handle());
    // One statement is one transaction: readers in other processes see the
    // row whole or not at all.
    HONE_TRY(Stmt stmt, prepare(db, file,
                                "INSERT OR REPLACE INTO figures (graph_hash, backend, config_key, "
                                "shapes, fingerprint, figures, stored_at) "
                                "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"));
    HONE_CHECK_OK(bind_key(db, stmt.get(), file, key));
    int rc = sqlite3_bind_text(stmt.get(), 6, figures_json.data(),
                               static_cast<int>(figures_json.size()), SQLITE_TRANSIENT);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(stmt.get(), 7, std::time(nullptr));
    if (rc != SQLITE_OK) return fail(sqlite_error(db, rc, file, "bind figures"));
    rc = sqlite3_step(stmt.get());
    if (rc != SQLITE_DONE) return fail(sqlite_error(db, rc, file, "store figures"));
    return {};
  };
  auto stored = attempt();
  if (stored || stored.error().code() != ErrorCode::kCorrupt) return stored;
  HONE_CHECK_OK(db_->rebuild(stored.error()));
  return attempt();
}

Result<int64_t> TuningCache::size() const {
  HONE_TRY(sqlite3 * db, db_->handle());
  HONE_TRY(std::string n, query_text(db, db_->file, "SELECT count(*) FROM figures"));
  return std::strtoll(n.c_str(), nullptr, 10);
}

Result<void> TuningCache::clear() {
  HONE_TRY(sqlite3 * db, db_->handle());
  return exec(db, db_->file, "DELETE FROM figures");
}

Result<void> TuningCache::check() const {
  HONE_TRY(sqlite3 * db, db_->handle());
  HONE_TRY(Stmt stmt, prepare(db, db_->file, "PRAGMA integrity_check"));
  std::string report;
  int rc;
  while ((rc = sqlite3_step(stmt.get())) == SQLITE_ROW) {
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt.get(), 0));
    if (!report.empty()) report += "; ";
    report += text != nullptr ? text : "";
  }
  if (rc != SQLITE_DONE) {
    Error e = sqlite_error(db, rc, db_->file, "run integrity_check");
    return fail(ErrorCode::kCorrupt, e.message());
  }
  if (report != "ok") {
    return fail(ErrorCode::kCorrupt, "tuning cache " + quoted(db_->file) + ": " + report);
  }
  return {};
}

}  // namespace hone
