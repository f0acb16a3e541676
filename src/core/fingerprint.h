// The environment fingerprint: what a package was tuned on (CPU model, the
// ISA features that change which kernels run, thread count, library
// versions, OS), recorded at save and compared at load.
//
//   Fingerprint here = current_fingerprint(4, {{"onednn", "2.6.3"}});  // tune/machine.h fills
//   these for (const std::string& d : fingerprint_differences(saved, here)) log(d);
//   cache_key.fingerprint = here.key();
//
// Only the ISA features that decide kernel choice are kept, so two machines
// that differ in an irrelevant flag still match.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "hone/error.h"

namespace hone {

struct Fingerprint {
  /// /proc/cpuinfo "model name" (or the nearest field on other CPUs).
  std::string cpu_model;
  /// Sorted subset of the CPU flags that matter for kernel choice
  /// (sse4_2 avx avx2 fma f16c avx512f ... amx_tile; asimd sve ... on Arm).
  std::vector<std::string> isa;
  /// The thread count tuned with.
  int threads = 0;
  /// "hone" and "compiler", and what the caller adds: "onednn", "onnx",
  /// "openblas" when linked.
  std::map<std::string, std::string> libraries;
  /// uname sysname and machine: "Linux x86_64".
  std::string os;

  /// Compact JSON with sorted keys: the same fingerprint gives the same text.
  std::string to_json() const;
  /// Errors: kCorrupt naming the field that is missing or of the wrong type.
  static Result<Fingerprint> from_json(std::string_view json);
  /// Stable 16-hex-digit hash of to_json(), for tuning-cache keys.
  std::string key() const;

  friend bool operator==(const Fingerprint&, const Fingerprint&) = default;
};

/// This machine, running with `threads` threads, with `libraries` (name →
/// version: what the backends run on and the importer, which the layers
/// above know; tune/machine.h gathers them) plus "hone" and "compiler".
Fingerprint current_fingerprint(int threads, std::map<std::string, std::string> libraries);

/// The CPU model and the ISA features that matter, parsed from the text of
/// /proc/cpuinfo (the first processor's block). Exposed for tests.
void parse_cpuinfo(std::string_view cpuinfo, Fingerprint& out);

/// Human-readable differences that matter for running a package tuned on
/// `package` here: "CPU lacks avx512f (package tuned with it)", "CPU model
/// 'X' != 'Y'", "threads 2 != 4", "onednn 2.6.0 != 3.1.0" (package value
/// first). Empty when compatible. The compiler version is not compared: it
/// changes neither results nor saved backend state.
std::vector<std::string> fingerprint_differences(const Fingerprint& package,
                                                 const Fingerprint& here);

}  // namespace hone
