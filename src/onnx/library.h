// The ONNX library hone imports and exports with, for the environment
// fingerprint (tune/machine.h).
//
//   std::string v = hone::onnx::library_version();   // "1.13.0"
#pragma once

#include <string>

namespace hone::onnx {

/// libonnx's release version.
std::string library_version();

}  // namespace hone::onnx
