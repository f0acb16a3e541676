// How hone::onnx::load_model reads a model's weights, for tools that only
// describe a model (`hone inspect`) and must not load a 20 GB initializer.
//
//   HONE_TRY(Graph g, hone::onnx::load_model("m.onnx", {.read_external_data = false}));
//   fmt::print("{} parameters\n", g.parameter_count());   // shapes only
//
// load_model_from_bytes with an empty base folder (a package's model, bytes
// from memory) refuses external data altogether.
#pragma once

#include <filesystem>

#include "hone/error.h"
#include "hone/graph.h"

namespace hone::onnx {

struct LoadModelOptions {
  /// false: initializers stored as external data are checked (location
  /// inside the model's folder, file size) but not read; they carry their
  /// dtype and shape and no data (a null pointer), so nothing may read them.
  bool read_external_data = true;
};

/// As load_model(file) in hone/onnx.h, with `options`.
[[nodiscard]] Result<Graph> load_model(const std::filesystem::path& file,
                                       const LoadModelOptions& options);

}  // namespace hone::onnx
