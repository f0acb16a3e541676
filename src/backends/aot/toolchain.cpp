#include "backends/aot/toolchain.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "backends/aot/weights_blob.h"
#include "core/log.h"
#include "hone/file_io.h"
#include "hone/limits.h"
#include "hone/read_file.h"
#include "hone/sha256.h"

extern char** environ;

namespace hone::aot {
namespace fs = std::filesystem;
namespace {

std::atomic<uint64_t> g_compiler_runs{0};

bool is_executable(const fs::path& p) {
  return ::access(p.c_str(), X_OK) == 0 && !fs::is_directory(p);
}

/// `name` as given when it has a slash, else the first match on PATH.
std::string which(const std::string& name) {
  if (name.find('/') != std::string::npos) return is_executable(name) ? name : "";
  const char* path = std::getenv("PATH");
  std::stringstream ss(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(ss, dir, ':'))
    if (!dir.empty() && is_executable(fs::path(dir) / name)) return (fs::path(dir) / name).string();
  return "";
}

/// Runs argv with stdout and stderr into `log`; the exit status, or -1 when it could not start.
int run_process(const std::vector<std::string>& argv, const fs::path& log) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return -1;
  int st = 0;
  while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

fs::path scratch_file(const std::string& stem) {
  static std::atomic<uint64_t> counter{0};
  return fs::path(stem + "." + std::to_string(::getpid()) + "." +
                  std::to_string(counter.fetch_add(1)) + ".tmp");
}

Result<std::string> capture(const std::vector<std::string>& argv) {
  const fs::path log = scratch_file((fs::temp_directory_path() / "hone-aot-probe").string());
  const int rc = run_process(argv, log);
  auto text = read_file(log);
  std::error_code ec;
  fs::remove(log, ec);
  if (rc != 0 || !text)
    return fail(ErrorCode::kUnsupportedHardware,
                "'" + argv[0] + "' did not run (status " + std::to_string(rc) + ")");
  return *text;
}

/// GCC/Clang predefined macros -> __builtin_cpu_supports names.
const std::vector<std::pair<std::string, std::string>>& feature_macros() {
  static const std::vector<std::pair<std::string, std::string>> m = {
      {"__SSE3__", "sse3"},         {"__SSSE3__", "ssse3"},       {"__SSE4_1__", "sse4.1"},
      {"__SSE4_2__", "sse4.2"},     {"__POPCNT__", "popcnt"},     {"__AVX__", "avx"},
      {"__AVX2__", "avx2"},         {"__FMA__", "fma"},           {"__BMI__", "bmi"},
      {"__BMI2__", "bmi2"},         {"__AVX512F__", "avx512f"},   {"__AVX512CD__", "avx512cd"},
      {"__AVX512BW__", "avx512bw"}, {"__AVX512DQ__", "avx512dq"}, {"__AVX512VL__", "avx512vl"}};
  return m;
}

}  // namespace

Result<std::string> read_file(const fs::path& p) {
  // Regular files only (a package's files are extracted by hone, but the
  // cache folder is the user's), at most the memory budget.
  auto bytes = read_regular_file(p, memory_budget());
  if (!bytes) {
    if (bytes.error().code() == ErrorCode::kNotFound)
      return fail(ErrorCode::kNotFound, "'" + p.string() + "' does not exist");
    return fail(std::move(bytes).error());
  }
  return std::string(bytes->begin(), bytes->end());
}

Result<Toolchain> find_toolchain(bool march_native) {
  std::string cxx;
  const char* env = std::getenv("HONE_CXX");
  if (env != nullptr && *env != '\0') {
    cxx = which(env);
    if (cxx.empty())
      return fail(ErrorCode::kUnsupportedHardware,
                  std::string("no C++ compiler: HONE_CXX='") + env +
                      "' is not an executable; the aot backend is unsupported on this machine");
  } else {
    for (const char* name : {"c++", "g++", "clang++"})
      if (cxx = which(name); !cxx.empty()) break;
    if (cxx.empty())
      return fail(ErrorCode::kUnsupportedHardware,
                  "no C++ compiler: none of c++, g++, clang++ is on PATH (set HONE_CXX); the aot "
                  "backend is unsupported on this machine");
  }
  static std::mutex mu;
  static std::map<std::pair<std::string, bool>, Toolchain> memo;
  std::lock_guard lock(mu);
  if (auto it = memo.find({cxx, march_native}); it != memo.end()) return it->second;
  Toolchain tc;
  tc.cxx = cxx;
  HONE_TRY(std::string version, capture({cxx, "--version"}));
  tc.version = version.substr(0, version.find('\n'));
  tc.flags = {"-x",
              "c",
              "-std=gnu11",
              "-O3",
              "-fPIC",
              "-shared",
              "-fopenmp",
              "-fvisibility=hidden",
              "-fno-math-errno"};
  if (march_native) {
    HONE_TRY(std::string macros,
             capture({cxx, "-march=native", "-dM", "-E", "-x", "c", "/dev/null"}));
    tc.flags.push_back("-march=native");
    for (const auto& [macro, name] : feature_macros())
      if (macros.find("#define " + macro + " ") != std::string::npos)
        tc.cpu_features.push_back(name);
  }
  tc.libraries = {"libdnnl.so.2", "libgomp.so.1", "libm.so.6", "libmvec.so.1", "libc.so.6"};
  HONE_LOG_DEBUG("aot: compiler {} ({}), cpu features [{}]", tc.cxx, tc.version,
                 tc.cpu_features.size());
  memo[{cxx, march_native}] = tc;
  return tc;
}

fs::path cache_dir() {
  if (const char* d = std::getenv("HONE_CACHE_DIR"); d != nullptr && *d != '\0')
    return fs::path(d) / "aot";
  if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0')
    return fs::path(h) / ".cache" / "hone" / "aot";
  return fs::temp_directory_path() / "hone-cache" / "aot";
}

uint64_t compiler_runs() {
  return g_compiler_runs.load();
}

Result<CompileResult> compile_cached(const Toolchain& tc, const std::string& source) {
  std::string keyed = source + "\n" + tc.cxx + "\n" + tc.version;
  for (const std::string& f : tc.flags) keyed += "\n" + f;
  // The key names the library that will be loaded for this source: a
  // collision would load the wrong code, so it is a SHA-256 (32 hex digits kept).
  CompileResult r;
  r.key = sha256_hex(keyed).substr(0, 32);
  const fs::path dir = cache_dir();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    return fail(ErrorCode::kIo,
                "cannot create the aot cache folder '" + dir.string() + "': " + ec.message());
  r.library = dir / (r.key + ".so");
  const fs::path log = dir / (r.key + ".log");
  if (fs::exists(r.library, ec)) {
    r.cache_hit = true;
    auto l = read_file(log);
    r.log = l ? *l : "";
    HONE_LOG_DEBUG("aot: cache hit {}", r.library.string());
    return r;
  }
  // Compile into temporaries, then rename: a concurrent tuner never sees half a library.
  const fs::path src = dir / (r.key + ".c");
  HONE_CHECK_OK(write_file_atomic(src, source));
  const fs::path tmp_lib = scratch_file((dir / r.key).string() + ".so");
  const fs::path tmp_log = scratch_file((dir / r.key).string() + ".log");
  std::vector<std::string> argv = {tc.cxx};
  argv.insert(argv.end(), tc.flags.begin(), tc.flags.end());
  argv.insert(argv.end(), {"-o", tmp_lib.string(), src.string(), "-ldnnl", "-lm"});
  g_compiler_runs.fetch_add(1);
  const int rc = run_process(argv, tmp_log);
  auto text = read_file(tmp_log);
  r.log = text ? *text : "";
  fs::remove(tmp_log, ec);
  if (rc != 0) {
    fs::remove(tmp_lib, ec);
    std::string tail = r.log.size() > 2000 ? r.log.substr(r.log.size() - 2000) : r.log;
    return fail(ErrorCode::kInternal, "the C compiler failed (status " + std::to_string(rc) +
                                          ") on generated code '" + src.string() +
                                          "'; this is a hone bug. Log:\n" + tail);
  }
  HONE_CHECK_OK(write_file_atomic(log, r.log));
  fs::rename(tmp_lib, r.library, ec);
  if (ec)
    return fail(ErrorCode::kIo, "cannot move the compiled library into '" + r.library.string() +
                                    "': " + ec.message());
  HONE_LOG_DEBUG("aot: compiled {} ({} bytes of source)", r.library.string(), source.size());
  return r;
}

Result<std::shared_ptr<Library>> Library::open(const fs::path& path) {
  std::shared_ptr<Library> lib(new Library());
  lib->handle_ = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib->handle_ == nullptr) {
    const char* e = ::dlerror();
    return fail(ErrorCode::kCorrupt, "cannot load the compiled library '" + path.string() +
                                         "': " + (e ? e : "dlopen failed"));
  }
  auto sym = [&](const char* name, auto& fn) -> Result<void> {
    void* s = ::dlsym(lib->handle_, name);
    if (s == nullptr)
      return fail(ErrorCode::kCorrupt,
                  "'" + path.string() + "' lacks the symbol " + name + "; not a hone aot library");
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(s);
    return {};
  };
  Abi& a = lib->abi_;
#define HONE_AOT_ABI_RESOLVE(name, ret, params) HONE_CHECK_OK(sym("hone_aot_" #name, a.name));
  HONE_AOT_FUNCTIONS(HONE_AOT_ABI_RESOLVE)
#undef HONE_AOT_ABI_RESOLVE
  if (const int v = a.abi_version(); v != HONE_AOT_ABI_VERSION)
    return fail(ErrorCode::kCorrupt, "'" + path.string() + "' was built for version " +
                                         std::to_string(v) + " of the aot ABI; this hone reads " +
                                         std::to_string(HONE_AOT_ABI_VERSION) + " (tune it again)");
  return lib;
}

Library::~Library() {
  if (handle_ != nullptr) ::dlclose(handle_);
}

}  // namespace hone::aot
