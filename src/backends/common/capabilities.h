// The capabilities every f32 compiling backend starts from: one device, f32
// data at f32 precision, shapes free to change between runs. Each backend's
// caps() builds its struct from this and adds what sets it apart.
//
//   static const BackendCapabilities c = f32_capabilities(Device::kCpu, BuildMode::kAheadOfTime);
//   BackendCapabilities k = f32_capabilities(Device::kCpu, BuildMode::kAheadOfTime);
//   k.has_artifact = true;  k.artifact_format = "native-so";
#pragma once

#include "hone/backend.h"

namespace hone {

/// Runs on `device`, f32 only, built by `mode`, with dynamic shapes; no artifact.
inline BackendCapabilities f32_capabilities(Device device, BuildMode mode) {
  BackendCapabilities k;
  k.devices = {device};
  k.dtypes = {DType::kF32};
  k.precisions = {Precision::kFp32};
  k.build_mode = mode;
  k.dynamic_shapes = true;
  return k;
}

}  // namespace hone
