// Temporary files and folders that must not outlive the process: a registry
// the signal handler empties, and a sweep of those a killed process left.
//
//   install_cleanup_handlers();                      // once, in main()
//   TempPathGuard guard(staging_dir);                 // removed on SIGINT/SIGTERM too
//   sweep_stale_temp_paths(dir, "hone-pkg-");         // removes hone-pkg-<dead pid>-*
//
// A temporary's name carries its creator's pid right after a fixed prefix
// ("hone-pkg-<pid>-XXXXXX", "model.hone.hone-tmp-<pid>-<hex>"), so the next
// run can tell a live writer's temporary from one a kill -9 left behind.
// Thread-safety: registration and the sweep may run on any thread; the
// handler only reads the registry with atomics and async-signal-safe calls.
#pragma once

#include <filesystem>
#include <string_view>

namespace hone {

/// Removes `path` (a file, or a folder with everything in it) when the
/// process gets SIGINT, SIGTERM, SIGHUP or SIGQUIT while the guard lives; the
/// destructor only unregisters (the owner removes the path itself). At most
/// 64 paths are registered at once; beyond that a path is simply not covered
/// by the handler.
class TempPathGuard {
 public:
  explicit TempPathGuard(const std::filesystem::path& path);
  ~TempPathGuard();
  TempPathGuard(TempPathGuard&& other) noexcept;
  TempPathGuard& operator=(TempPathGuard&&) = delete;
  TempPathGuard(const TempPathGuard&) = delete;

 private:
  int slot_ = -1;
};

/// Installs the handlers for SIGINT, SIGTERM, SIGHUP and SIGQUIT: they remove
/// every registered path, then the signal takes its default action (so the
/// exit status still says which signal it was). Idempotent.
void install_cleanup_handlers();

/// Removes entries of `dir` named `prefix` + "<pid>-..." whose pid is not a
/// running process (and is not this one). Returns how many it removed.
int sweep_stale_temp_paths(const std::filesystem::path& dir, std::string_view prefix);

/// The pid right after `prefix` in `name` ("<prefix><pid>-..."), or 0.
int temp_path_pid(std::string_view name, std::string_view prefix);

}  // namespace hone
