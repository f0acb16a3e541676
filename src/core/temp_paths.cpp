#include "hone/temp_paths.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <string>
#include <system_error>

namespace hone {
namespace {

constexpr int kSlots = 64;
constexpr size_t kPathMax = 4096;

// 0 free, 1 being written, 2 ready for the handler.
struct Slot {
  std::atomic<int> state{0};
  pid_t owner = 0;  // a forked child (shape inference, conformance) leaves its parent's paths alone
  char path[kPathMax];
};
Slot g_slots[kSlots];

// The record getdents64 fills (not in glibc's headers).
struct Dirent64 {
  uint64_t ino;
  int64_t off;
  unsigned short reclen;
  unsigned char type;
  char name[];
};

bool is_dot(const char* n) {
  return n[0] == '.' && (n[1] == '\0' || (n[1] == '.' && n[2] == '\0'));
}

// Removes `name` under `parent_fd` (a file, or a folder with everything in
// it) using only async-signal-safe system calls: no malloc, no locks.
void remove_tree_at(int parent_fd, const char* name, int depth) {
  if (::unlinkat(parent_fd, name, 0) == 0 || errno == ENOENT) return;
  if (depth > 24) return;
  const int fd = ::openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  // Removing entries while reading a folder may skip some, so read it again
  // until a pass finds nothing left.
  for (int pass = 0; pass < 16; ++pass) {
    bool found = false;
    ::lseek(fd, 0, SEEK_SET);
    alignas(8) char buf[2048];
    for (;;) {
      const long n = ::syscall(SYS_getdents64, fd, buf, sizeof buf);
      if (n <= 0) break;
      for (long off = 0; off < n;) {
        const auto* d = reinterpret_cast<const Dirent64*>(buf + off);
        off += d->reclen;
        if (is_dot(d->name)) continue;
        found = true;
        remove_tree_at(fd, d->name, depth + 1);
      }
    }
    if (!found) break;
  }
  ::close(fd);
  ::unlinkat(parent_fd, name, AT_REMOVEDIR);
}

extern "C" void hone_cleanup_on_signal(int sig) {
  const int saved = errno;
  const pid_t self = ::getpid();
  for (Slot& s : g_slots)
    if (s.state.load(std::memory_order_acquire) == 2 && s.owner == self)
      remove_tree_at(AT_FDCWD, s.path, 0);
  errno = saved;
  // SA_RESETHAND restored the default action; SA_NODEFER lets it act now.
  ::raise(sig);
}

}  // namespace

TempPathGuard::TempPathGuard(const std::filesystem::path& path) {
  std::error_code ec;
  const std::string p = std::filesystem::absolute(path, ec).string();
  if (ec || p.size() >= kPathMax) return;
  for (int i = 0; i < kSlots; ++i) {
    int expected = 0;
    if (!g_slots[i].state.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) continue;
    std::memcpy(g_slots[i].path, p.c_str(), p.size() + 1);
    g_slots[i].owner = ::getpid();
    g_slots[i].state.store(2, std::memory_order_release);
    slot_ = i;
    return;
  }
}

TempPathGuard::TempPathGuard(TempPathGuard&& other) noexcept : slot_(other.slot_) {
  other.slot_ = -1;
}

TempPathGuard::~TempPathGuard() {
  if (slot_ >= 0) g_slots[slot_].state.store(0, std::memory_order_release);
}

void install_cleanup_handlers() {
  static std::atomic<bool> installed{false};
  if (installed.exchange(true)) return;
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = hone_cleanup_on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND | SA_NODEFER;
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) {
    struct sigaction old;
    // A signal the parent set to be ignored (nohup) stays ignored.
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    ::sigaction(sig, &sa, nullptr);
  }
}

int temp_path_pid(std::string_view name, std::string_view prefix) {
  if (!name.starts_with(prefix)) return 0;
  const std::string_view rest = name.substr(prefix.size());
  int pid = 0;
  const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), pid);
  if (ec != std::errc() || end == rest.data() || end == rest.data() + rest.size() || *end != '-')
    return 0;
  return pid > 0 ? pid : 0;
}

int sweep_stale_temp_paths(const std::filesystem::path& dir, std::string_view prefix) {
  namespace fs = std::filesystem;
  int removed = 0;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const int pid = temp_path_pid(name, prefix);
    if (pid == 0 || pid == ::getpid()) continue;
    if (::kill(pid, 0) == 0 || errno != ESRCH) continue;  // alive, or not ours to judge
    std::error_code rec;
    if (fs::remove_all(it->path(), rec) > 0 && !rec) ++removed;
  }
  return removed;
}

}  // namespace hone
