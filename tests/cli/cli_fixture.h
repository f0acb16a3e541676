// The fixture the CLI tests share: runs the `hone` binary as a user would,
// in a fresh temporary folder per test, and captures exit code and output.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace hone_cli_test {

namespace fs = std::filesystem;

struct Ran {
  int code = -1;
  std::string out, err;
};

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("hone_cli_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  Ran hone(const std::string& args) {
    const fs::path out = dir_ / "stdout.txt", err = dir_ / "stderr.txt";
    const std::string cmd =
        std::string(HONE_CLI_PATH) + " " + args + " >" + out.string() + " 2>" + err.string();
    const int st = std::system(cmd.c_str());
    Ran r;
    r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
  }
  /// Runs a whole shell command line (not the hone binary), stdout and stderr together.
  Ran hone_shell(const std::string& line) {
    const fs::path out = dir_ / "shell.txt";
    const int st = std::system((line + " >" + out.string() + " 2>&1").c_str());
    Ran r;
    r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    r.out = slurp(out);
    return r;
  }
  static std::string model(const std::string& name) {
    return std::string(HONE_SOURCE_DIR) + "/models/" + name;
  }
  fs::path dir_;
};

}  // namespace hone_cli_test
