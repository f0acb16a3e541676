#include "hone/triton.h"

#include <stdlib.h>

#include <cctype>

#include <fmt/core.h>

#include "hone/file_io.h"
#include "hone/onnx.h"
#include "package/folder_path.h"

namespace hone {
namespace {

namespace fs = std::filesystem;

/// Triton's DataType enum names (model_config.proto).
Result<std::string> triton_type(DType t) {
  switch (t) {
    case DType::kF32:
      return std::string("TYPE_FP32");
    case DType::kF16:
      return std::string("TYPE_FP16");
    case DType::kBF16:
      return std::string("TYPE_BF16");
    case DType::kF64:
      return std::string("TYPE_FP64");
    case DType::kI8:
      return std::string("TYPE_INT8");
    case DType::kU8:
      return std::string("TYPE_UINT8");
    case DType::kI16:
      return std::string("TYPE_INT16");
    case DType::kU16:
      return std::string("TYPE_UINT16");
    case DType::kI32:
      return std::string("TYPE_INT32");
    case DType::kU32:
      return std::string("TYPE_UINT32");
    case DType::kI64:
      return std::string("TYPE_INT64");
    case DType::kU64:
      return std::string("TYPE_UINT64");
    case DType::kBool:
      return std::string("TYPE_BOOL");
    case DType::kUndefined:
      break;
  }
  return fail(ErrorCode::kUnsupported,
              "dtype " + std::string(dtype_name(t)) + " has no Triton type");
}

/// A text-format string literal: the name between quotes, with quotes and
/// backslashes escaped (graph value names may hold either).
std::string text_literal(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string default_name(const Graph& g) {
  std::string n;
  for (char c : g.name())
    n += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') ? c : '_';
  return n.empty() || n.front() == '.' ? "model" : n;
}

/// Triton batches only along a first axis every input and output shares.
bool batches_first(const GraphSpec& spec) {
  if (spec.batch_dim.empty() || !spec.bounds.count(spec.batch_dim)) return false;
  for (const auto* list : {&spec.inputs, &spec.outputs})
    for (const TensorSpec& t : *list)
      if (t.batch_axis != 0 || t.dims.empty()) return false;
  return true;
}

Result<std::string> tensor_entries(const char* field, const std::vector<TensorSpec>& ts,
                                   bool batching) {
  std::string out = fmt::format("{} [\n", field);
  for (size_t i = 0; i < ts.size(); ++i) {
    const TensorSpec& t = ts[i];
    if (!t.rank_known)
      return fail(ErrorCode::kUnsupported,
                  fmt::format("{} '{}' has an unknown rank; Triton needs its dims", field, t.name));
    HONE_TRY(std::string type, triton_type(t.dtype));
    std::string dims;
    for (size_t a = batching ? 1 : 0; a < t.dims.size(); ++a)
      dims += fmt::format("{}{}", dims.empty() ? "" : ", ",
                          t.dims[a].kind == DimSpec::Kind::kStatic ? t.dims[a].size : -1);
    // A 0-d tensor: Triton wants at least one dim, and reshapes it away.
    const bool scalar = dims.empty();
    out += fmt::format("  {{\n    name: {}\n    data_type: {}\n    dims: [ {} ]\n{}  }}{}\n",
                       text_literal(t.name), type, scalar ? "1" : dims,
                       scalar ? "    reshape: { shape: [ ] }\n" : "", i + 1 < ts.size() ? "," : "");
  }
  return out + "]\n";
}

}  // namespace

Result<TritonRecord> export_triton(const TunedModel& model, const fs::path& repo_given,
                                   const TritonOptions& options) {
  const fs::path repo = package::folder_path(repo_given);
  const std::string where = "while exporting a Triton model to '" + repo.string() + "'";
  TritonRecord rec;
  rec.name = options.name.empty() ? default_name(model.graph()) : options.name;
  if (rec.name == "." || rec.name == ".." || rec.name.find_first_of("/\\\n") != std::string::npos)
    return fail(Error(ErrorCode::kInvalidArgument,
                      "model name '" + rec.name + "' is not a plain folder name")
                    .add_context(where));
  if (options.instance_count < 1)
    return fail(
        Error(ErrorCode::kInvalidArgument, "instance count must be at least 1").add_context(where));
  const GraphSpec& spec = model.spec();
  const bool batching = batches_first(spec);
  rec.max_batch_size = batching ? spec.bounds.at(spec.batch_dim).max : 0;

  bool gpu = false;
  for (Device d : model.backend().capabilities().devices) gpu = gpu || d == Device::kCuda;
  std::string config = fmt::format(
      "# Triton model configuration written by hone from the tuned '{}' ({} backend chosen).\n"
      "name: {}\nplatform: \"onnxruntime_onnx\"\nbackend: \"onnxruntime\"\nmax_batch_size: {}\n",
      model.graph().name(), model.decision().backend, text_literal(rec.name), rec.max_batch_size);
  auto inputs = tensor_entries("input", spec.inputs, batching);
  if (!inputs) return fail(std::move(inputs).error().add_context(where));
  auto outputs = tensor_entries("output", spec.outputs, batching);
  if (!outputs) return fail(std::move(outputs).error().add_context(where));
  config += *inputs + *outputs;
  config += fmt::format("instance_group [\n  {{\n    count: {}\n    kind: {}\n  }}\n]\n",
                        options.instance_count, gpu ? "KIND_GPU" : "KIND_CPU");
  if (batching) config += "dynamic_batching { }\n";
  rec.config = config;

  std::error_code ec;
  rec.model_dir = repo / rec.name;
  if (fs::exists(rec.model_dir, ec))
    return fail(Error(ErrorCode::kFailedPrecondition,
                      "model '" + rec.name + "' already exists in the repository (" +
                          rec.model_dir.string() +
                          "); remove it or choose another name (nothing was changed)")
                    .add_context(where));
  const fs::path parent = repo.has_parent_path() ? repo.parent_path() : fs::path(".");
  if (!fs::is_directory(parent, ec))
    return fail(Error(ErrorCode::kNotFound, "folder '" + parent.string() + "' does not exist")
                    .add_context(where));
  if (fs::exists(repo, ec) && !fs::is_directory(repo, ec))
    return fail(Error(ErrorCode::kFailedPrecondition, "'" + repo.string() + "' is not a folder")
                    .add_context(where));
  const bool made_repo = !fs::exists(repo, ec);
  fs::create_directories(repo, ec);
  if (ec)
    return fail(Error(ErrorCode::kIo, "cannot create '" + repo.string() + "': " + ec.message())
                    .add_context(where));
  std::string tmpl = (repo / ("." + rec.name + ".tmp-XXXXXX")).string();
  if (mkdtemp(tmpl.data()) == nullptr)
    return fail(Error(ErrorCode::kIo, "cannot create a temporary folder in '" + repo.string() + "'")
                    .add_context(where));
  const fs::path tmp(tmpl);
  auto failed = [&](Error e) {
    fs::remove_all(tmp, ec);
    if (made_repo) fs::remove(repo, ec);  // only when empty: a repository we created
    return fail(std::move(e).add_context(where));
  };
  fs::create_directory(tmp / "1", ec);
  if (ec) return failed(Error(ErrorCode::kIo, "cannot create the version folder: " + ec.message()));
  // Weights above 1 MiB go to one external file next to model.onnx, which
  // ONNX Runtime finds relative to the model, as for `--format onnx`.
  onnx::SaveOptions so;
  so.external_threshold_bytes = size_t{1} << 20;
  so.external_data =
      static_cast<size_t>(model.graph().parameter_bytes()) >= so.external_threshold_bytes;
  so.external_file = "model.weights";
  if (auto s = onnx::save_model(model.graph(), tmp / "1" / "model.onnx", so); !s)
    return failed(std::move(s).error());
  if (auto w = write_file_atomic(tmp / "config.pbtxt", config); !w)
    return failed(std::move(w).error());
  fs::rename(tmp, rec.model_dir, ec);
  if (ec) return failed(Error(ErrorCode::kIo, "cannot move the model into place: " + ec.message()));
  return rec;
}

}  // namespace hone
