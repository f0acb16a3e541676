// Killing a writer mid-save: the package that was there must survive whole,
// what the killed writer left must not pass for a package, and the next
// save must clean it up.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <optional>
#include <thread>

#include "package/archive.h"
#include "package_test_util.h"

namespace hone::package {
namespace {

using namespace hone::package::testing;

std::vector<Entry> old_entries() {
  return {{"manifest.json", R"({"generation": "old"})"}, {"model.onnx", std::string(200000, 'o')}};
}

// Tens of MB, so the write takes long enough to be caught at several points.
std::vector<Entry> big_entries() {
  std::string weights(32u << 20, '\0');
  for (size_t i = 0; i < weights.size(); ++i) weights[i] = static_cast<char>((i * 131) >> 7);
  return {{"manifest.json", R"({"generation": "new"})"}, {"weights.bin", std::move(weights)}};
}

std::vector<fs::path> temporaries_of(const fs::path& file) {
  std::vector<fs::path> out;
  const std::string stem = file.filename().string() + std::string(kTempInfix);
  for (const auto& e : fs::directory_iterator(file.parent_path())) {
    if (e.path().filename().string().starts_with(stem)) out.push_back(e.path());
  }
  return out;
}

struct KillOutcome {
  bool killed = false;          // the child was still running when killed
  uint64_t temp_size_seen = 0;  // size of its temporary when the kill was sent
};

/// Forks a writer of big_entries() over `file` and SIGKILLs it once its
/// temporary holds at least `fraction` of `final_size` bytes (a negative
/// fraction: right after fork, before it could create anything).
KillOutcome save_and_kill(const fs::path& file, std::vector<Entry> entries, double fraction,
                          uint64_t final_size) {
  const pid_t child = ::fork();
  if (child < 0) return {};
  if (child == 0) {
    auto r = write_archive(file, std::move(entries));
    ::_exit(r ? 0 : 1);
  }
  KillOutcome out;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (fraction >= 0 && std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (::waitpid(child, &status, WNOHANG) == child) return out;  // finished first
    bool reached = false;
    for (const fs::path& t : temporaries_of(file)) {
      std::error_code ec;
      const uint64_t size = fs::file_size(t, ec);
      if (!ec && size >= static_cast<uint64_t>(fraction * static_cast<double>(final_size))) {
        out.temp_size_seen = size;
        reached = true;
      }
    }
    if (reached) break;
  }
  out.killed = ::kill(child, SIGKILL) == 0;
  int status = 0;
  ::waitpid(child, &status, 0);
  out.killed = out.killed && WIFSIGNALED(status);
  return out;
}

TEST(ArchiveKill, KilledSaveNeverDamagesTheOldPackage) {
  const fs::path dir = fresh_dir("archive_kill");
  const fs::path file = dir / "model.hone";
  // The exact bytes a finished save produces (writes are deterministic).
  ASSERT_TRUE(write_archive(dir / "reference.hone", big_entries()));
  const std::string new_bytes = read_bytes(dir / "reference.hone");
  fs::remove(dir / "reference.hone");

  int mid_write_kills = 0;
  // The kill lands where the writer happens to be when the poll sees the size:
  // on a loaded machine a whole write can slip between two polls, so the
  // sequence is repeated (up to 10 times) until two kills caught it mid-write.
  for (int round = 0; round < 10 && mid_write_kills < 2; ++round)
    for (double fraction : {-1.0, 0.0, 0.1, 0.5, 0.9, 1.0}) {
      SCOPED_TRACE("round " + std::to_string(round) + ", kill at " + std::to_string(fraction));
      ASSERT_TRUE(write_archive(file, old_entries()));
      const std::string old_bytes = read_bytes(file);
      const KillOutcome k = save_and_kill(file, big_entries(), fraction, new_bytes.size());

      // The target is whole: the old package, or the new one if the rename won.
      auto read = read_archive(file);
      ASSERT_TRUE(read) << read.error().to_string();
      const std::string now = read_bytes(file);
      ASSERT_TRUE(now == old_bytes || now == new_bytes) << "the target is neither package";
      RecordProperty("kill_at_" + std::to_string(round) + "_" + std::to_string(fraction),
                     std::to_string(k.killed) + "/" + std::to_string(k.temp_size_seen));
      if (k.killed && k.temp_size_seen > 0 && k.temp_size_seen < new_bytes.size()) {
        ++mid_write_kills;
        EXPECT_EQ(now, old_bytes) << "killed with " << k.temp_size_seen << " of "
                                  << new_bytes.size() << " bytes written, yet the target changed";
        // What the killed writer left is not a package, and does not look like one.
        const auto temps = temporaries_of(file);
        ASSERT_EQ(temps.size(), 1u);
        EXPECT_NE(temps[0].extension(), ".hone");
        auto as_package = read_archive(temps[0]);
        ASSERT_FALSE(as_package) << "a half-written temporary verified as a package";
        EXPECT_EQ(as_package.error().code(), ErrorCode::kCorrupt);
      }
      // The next save removes the dead writer's temporary.
      ASSERT_TRUE(write_archive(file, old_entries()));
      EXPECT_TRUE(temporaries_of(file).empty());
    }
  RecordProperty("mid_write_kills", mid_write_kills);
  // Guard against a test that passes by never catching the writer mid-write.
  EXPECT_GE(mid_write_kills, 2) << "the kills all missed the write";
}

TEST(ArchiveKill, StaleTemporariesAreRemovedOnlyWhenTheirWriterIsGone) {
  const fs::path dir = fresh_dir("archive_kill");
  const fs::path file = dir / "model.hone";
  // A pid that certainly has no process: a child that has exited and been reaped.
  const pid_t dead = ::fork();
  ASSERT_GE(dead, 0);
  if (dead == 0) ::_exit(0);
  ASSERT_EQ(::waitpid(dead, nullptr, 0), dead);
  const pid_t alive = ::getppid();  // whoever started the tests is still running

  const std::string stem = file.string() + std::string(kTempInfix);
  const fs::path of_dead = stem + std::to_string(dead) + "-00aa";
  const fs::path of_live_old = stem + std::to_string(alive) + "-00bb";
  const fs::path of_live_fresh = stem + std::to_string(alive) + "-00cc";
  const fs::path other_target =
      (dir / "other.hone").string() + std::string(kTempInfix) + std::to_string(dead) + "-00dd";
  for (const fs::path& p : {of_dead, of_live_old, of_live_fresh, other_target}) {
    write_bytes(p, "PK half");
  }
  fs::last_write_time(of_live_old, fs::file_time_type::clock::now() - std::chrono::minutes(5));

  ASSERT_TRUE(write_archive(file, old_entries()));
  EXPECT_FALSE(fs::exists(of_dead)) << "writer pid gone";
  EXPECT_FALSE(fs::exists(of_live_old)) << "untouched for five minutes";
  EXPECT_TRUE(fs::exists(of_live_fresh)) << "a live writer's temporary was removed";
  EXPECT_TRUE(fs::exists(other_target)) << "another package's temporary was removed";
  EXPECT_TRUE(read_archive(file));
}

}  // namespace
}  // namespace hone::package
