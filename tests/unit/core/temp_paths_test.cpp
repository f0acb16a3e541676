#include "hone/temp_paths.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "hone/file_io.h"
#include "hone/limits.h"
#include "hone/read_file.h"
#include "hone/tensor.h"

namespace hone {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  const fs::path d =
      fs::temp_directory_path() / ("hone_temp_paths_" + std::to_string(::getpid()) + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// A process killed by SIGTERM or SIGINT while it holds a staging folder
// (with files and subfolders) leaves nothing, and still dies of the signal.
TEST(TempPaths, SignalRemovesRegisteredPathsAndKeepsTheSignal) {
  for (int sig : {SIGTERM, SIGINT}) {
    const fs::path root = fresh_dir("_sig" + std::to_string(sig));
    const fs::path staging = root / "hone-pkg-1-abc";
    const pid_t child = ::fork();
    if (child == 0) {
      install_cleanup_handlers();
      fs::create_directories(staging / "block_0" / "deep");
      for (int i = 0; i < 300; ++i) std::ofstream(staging / ("f" + std::to_string(i))) << i;
      std::ofstream(staging / "block_0" / "deep" / "model.so") << "x";
      const TempPathGuard guard(staging);
      const fs::path file = root / "out.hone.hone-tmp-1-ff";
      std::ofstream(file) << "half";
      const TempPathGuard file_guard(file);
      ::raise(sig);
      ::_exit(0);  // not reached
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFSIGNALED(status));
    if (WIFSIGNALED(status)) EXPECT_EQ(WTERMSIG(status), sig);
    EXPECT_FALSE(fs::exists(staging));
    EXPECT_FALSE(fs::exists(root / "out.hone.hone-tmp-1-ff"));
    fs::remove_all(root);
  }
}

TEST(TempPaths, SweepRemovesOnlyDeadWritersPaths) {
  const fs::path root = fresh_dir("_sweep");
  const pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ::waitpid(dead, nullptr, 0);
  fs::create_directories(root / ("hone-pkg-" + std::to_string(dead) + "-x") / "sub");
  fs::create_directories(root / ("hone-pkg-" + std::to_string(::getppid()) + "-y"));
  fs::create_directories(root / "hone-pkg-notapid");
  EXPECT_EQ(sweep_stale_temp_paths(root, "hone-pkg-"), 1);
  EXPECT_FALSE(fs::exists(root / ("hone-pkg-" + std::to_string(dead) + "-x")));
  EXPECT_TRUE(fs::exists(root / ("hone-pkg-" + std::to_string(::getppid()) + "-y")));
  EXPECT_TRUE(fs::exists(root / "hone-pkg-notapid"));
  EXPECT_EQ(temp_path_pid("hone-pkg-123-abc", "hone-pkg-"), 123);
  EXPECT_EQ(temp_path_pid("hone-pkg-123", "hone-pkg-"), 0);
  fs::remove_all(root);
}

TEST(RegularFile, RefusesWhatIsNotARegularFileWithoutBlocking) {
  const fs::path root = fresh_dir("_regular");
  ASSERT_EQ(::mkfifo((root / "fifo").c_str(), 0600), 0);
  auto fifo = read_regular_file(root / "fifo", 100);
  ASSERT_FALSE(fifo);
  EXPECT_NE(fifo.error().message().find("FIFO"), std::string::npos);
  auto dev = read_regular_file("/dev/zero", 100);
  ASSERT_FALSE(dev);
  EXPECT_NE(dev.error().message().find("character device"), std::string::npos);
  auto dir = read_regular_file(root, 100);
  ASSERT_FALSE(dir);
  EXPECT_NE(dir.error().message().find("folder"), std::string::npos);
  std::ofstream(root / "f") << "hello";
  EXPECT_EQ(read_regular_file(root / "f", 100)->size(), 5u);
  auto big = read_regular_file(root / "f", 4);
  ASSERT_FALSE(big);
  EXPECT_EQ(big.error().code(), ErrorCode::kUnsupported);
  EXPECT_EQ(read_regular_file(root / "missing", 4).error().code(), ErrorCode::kNotFound);
  fs::remove_all(root);
}

TEST(MemoryBudget, ChecksAndParses) {
  EXPECT_EQ(*parse_byte_size("512M"), 512ull << 20);
  EXPECT_EQ(*parse_byte_size("1.5G"), 3ull << 29);
  EXPECT_EQ(*parse_byte_size("100"), 100u);
  EXPECT_FALSE(parse_byte_size("lots"));
  EXPECT_FALSE(parse_byte_size("-1G"));
  EXPECT_FALSE(parse_byte_size("5X"));
  set_memory_budget(1000);
  auto r = check_allocation(1001, "tensor 'w'");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kOutOfMemory);
  EXPECT_NE(r.error().message().find("tensor 'w'"), std::string::npos);
  EXPECT_TRUE(check_allocation(1000, "x"));
  auto t = Tensor::allocate(DType::kF32, {1000});
  EXPECT_FALSE(t);
  set_memory_budget(0);
  EXPECT_TRUE(Tensor::allocate(DType::kF32, {1000}));
  EXPECT_GT(memory_budget(), 0u);
}

}  // namespace
}  // namespace hone
