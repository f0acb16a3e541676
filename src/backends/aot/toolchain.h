// Private to the aot backend: the system C compiler that builds generated
// code, a cache of compiled libraries keyed by source hash, and an RAII
// handle on a loaded library with the generated C ABI resolved.
//
//   HONE_TRY(Toolchain tc, find_toolchain(/*march_native=*/true));
//   HONE_TRY(CompileResult lib, compile_cached(tc, source));   // cache hit: no compiler run
//   HONE_TRY(auto so, Library::open(lib.library));
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "backends/aot/runtime/hone_aot_abi.h"
#include "hone/error.h"
#include "hone/tensor.h"

namespace hone::aot {

struct Toolchain {
  std::string cxx;                 // the compiler's path
  std::string version;             // first line of `cxx --version`
  std::vector<std::string> flags;  // compile and link flags
  std::vector<std::string>
      cpu_features;  // what -march=native enables, as __builtin_cpu_supports names
  std::vector<std::string> libraries;  // shared libraries the output needs
};

/// HONE_CXX, else c++, g++ or clang++ on PATH; kUnsupportedHardware "no C++
/// compiler ..." when none runs. Results are memoized per compiler path.
[[nodiscard]] Result<Toolchain> find_toolchain(bool march_native);

/// $HONE_CACHE_DIR/aot, else ~/.cache/hone/aot (created on demand).
std::filesystem::path cache_dir();

struct CompileResult {
  std::filesystem::path library;  // in the cache
  std::string key;                // 32 hex digits of the source + toolchain SHA-256
  std::string log;                // the compiler's output (kept from the first compile on a hit)
  bool cache_hit = false;
};
/// Compiles `source` (C) into a shared library unless the cache has it.
[[nodiscard]] Result<CompileResult> compile_cached(const Toolchain& tc, const std::string& source);
/// Compiler processes started by this process (tests prove cache hits with it).
uint64_t compiler_runs();

/// The generated library's C ABI (runtime/hone_aot_abi.h): one pointer per
/// function, named as there (abi.run is hone_aot_run).
struct Abi {
#define HONE_AOT_ABI_SLOT(name, ret, params) hone_aot_##name##_fn name = nullptr;
  HONE_AOT_FUNCTIONS(HONE_AOT_ABI_SLOT)
#undef HONE_AOT_ABI_SLOT
};

/// Gives `outs`, the outputs of the last run of `model` on this thread, the
/// dims that run made (ran_output_shape): an output whose length a NonZero
/// found keeps its first elements (nonzero.cpp).
[[nodiscard]] Result<void> take_ran_dims(const Abi& abi, void* model, std::vector<Tensor>& outs);

class Library {
 public:
  /// dlopens `path` and resolves the ABI; kCorrupt naming the file when it
  /// is not a library, lacks a symbol or was built for another ABI version.
  [[nodiscard]] static Result<std::shared_ptr<Library>> open(const std::filesystem::path& path);
  ~Library();
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;
  const Abi& abi() const { return abi_; }

 private:
  Library() = default;
  void* handle_ = nullptr;
  Abi abi_;
};

/// Bytes of a file, or kIo/kNotFound naming it.
[[nodiscard]] Result<std::string> read_file(const std::filesystem::path& p);

}  // namespace hone::aot
