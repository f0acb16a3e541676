// This machine as packages and the tuning cache see it: the environment
// fingerprint (core/fingerprint.h) with the versions of the libraries the
// registered backends run on (their capabilities) and of the ONNX importer.
//
//   Fingerprint here = machine_fingerprint(4);
//   cache_key.fingerprint = here.key();
#pragma once

#include <map>
#include <string>

#include "core/fingerprint.h"

namespace hone {

/// Name → version of every library that changes results or saved state:
/// each registered backend's (BackendCapabilities::libraries) and "onnx".
std::map<std::string, std::string> machine_library_versions();

/// current_fingerprint() with machine_library_versions().
Fingerprint machine_fingerprint(int threads);

}  // namespace hone
