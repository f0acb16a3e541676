// Samples from files and from a random generator.
#include "hone/sample.h"

#include <algorithm>
#include <map>
#include <set>
#include <system_error>

#include "hone/graph_spec.h"
#include "hone/npy.h"
#include "hone/onnx.h"
#include "hone/sample_folder.h"
#include "tune/sample_path.h"

namespace hone {

namespace fs = std::filesystem;

Result<Tensor> random_tensor(DType dtype, const std::vector<int64_t>& shape, std::mt19937_64& rng) {
  if (!is_floating(dtype) && !is_integer(dtype) && dtype != DType::kBool)
    return fail(ErrorCode::kUnsupported,
                "no random values are generated for dtype " + std::string(dtype_name(dtype)));
  HONE_TRY(Tensor t, Tensor::allocate(dtype, shape));
  // One distribution draw per element, in order, so the values depend on the
  // seed and the shape only (the CLI's --random-inputs relies on this).
  if (is_floating(dtype)) {
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (int64_t i = 0; i < t.numel(); ++i) tensor_set_element_from_double(t, i, u(rng));
  } else if (is_integer(dtype)) {
    std::uniform_int_distribution<int> u(0, 9);
    for (int64_t i = 0; i < t.numel(); ++i) tensor_set_element_from_double(t, i, u(rng));
  } else {
    std::bernoulli_distribution u(0.5);
    for (int64_t i = 0; i < t.numel(); ++i) tensor_set_element_from_double(t, i, u(rng) ? 1 : 0);
  }
  return t;
}

Result<Tensor> load_input_file(const fs::path& dir, size_t i) {
  const fs::path pb = dir / ("input_" + std::to_string(i) + ".pb");
  const fs::path npy = dir / ("input_" + std::to_string(i) + ".npy");
  std::error_code ec;
  if (fs::exists(pb, ec)) {
    HONE_TRY(onnx::DataValue v, onnx::load_data_file(pb, ValueKind::kTensor));
    if (v.kind != onnx::DataValue::Kind::kTensor)
      return fail(ErrorCode::kUnsupported,
                  pb.string() + " holds a sequence or optional; samples hold tensors only");
    return v.tensor;
  }
  if (fs::exists(npy, ec)) return load_npy(npy);
  return fail(ErrorCode::kNotFound, "neither " + pb.string() + " nor " + npy.string() + " exists");
}

namespace {

// The input index of "input_<i>.pb" / "input_<i>.npy", or -1 for other names.
int64_t input_file_index(const fs::path& file) {
  const std::string stem = file.stem().string();
  const std::string ext = file.extension().string();
  if ((ext != ".pb" && ext != ".npy") || stem.rfind("input_", 0) != 0) return -1;
  const std::string digits = stem.substr(6);
  if (digits.empty() || digits.size() > 9 ||
      digits.find_first_not_of("0123456789") != std::string::npos)
    return -1;
  return std::stoll(digits);
}

Result<void> check_files(const fs::path& dir, size_t n) {
  std::map<int64_t, std::vector<fs::path>> files;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const int64_t i = input_file_index(it->path());
    if (i < 0) continue;
    if (static_cast<size_t>(i) >= n)
      return fail(ErrorCode::kInvalidArgument,
                  it->path().string() + ": the model has only " + std::to_string(n) +
                      " input(s), so there is no input " + std::to_string(i));
    files[i].push_back(it->path());
  }
  if (ec) return fail(ErrorCode::kIo, dir.string() + ": cannot list: " + ec.message());
  for (const auto& [i, paths] : files)
    if (paths.size() > 1)
      return fail(ErrorCode::kInvalidArgument, dir.string() + ": input " + std::to_string(i) +
                                                   " is given twice (input_" + std::to_string(i) +
                                                   ".pb and .npy)");
  return {};
}

Result<Sample> load_one_sample(const fs::path& dir, const Graph& g) {
  const size_t n = g.inputs().size();
  HONE_CHECK_OK(check_files(dir, n));

  // Keyed by input name when every name can be a path key; else a list,
  // which binds positionally all the same.
  bool names_are_keys = true;
  for (ValueId id : g.inputs()) names_are_keys &= tuning::is_path_key(g.value(id).name);
  SampleMap m;
  SampleList l;
  for (size_t i = 0; i < n; ++i) {
    const std::string& name = g.value(g.inputs()[i]).name;
    auto t = load_input_file(dir, i);
    if (!t)
      return fail(std::move(t).error().add_context("while reading input " + std::to_string(i) +
                                                   " '" + name + "' of the sample in " +
                                                   dir.string()));
    if (names_are_keys)
      m.emplace(name, std::move(*t));
    else
      l.push_back(std::move(*t));
  }
  if (names_are_keys) return m;
  return l;
}

}  // namespace

Result<void> check_input_folder(const fs::path& dir, size_t num_inputs) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return fail(ErrorCode::kNotFound, dir.string() + ": no such input folder");
  return check_files(dir, num_inputs);
}

Result<std::vector<Sample>> load_samples(const fs::path& dir, const Graph& g) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return fail(ErrorCode::kNotFound, dir.string() + ": no such sample folder");
  bool has_input_files = false;
  std::vector<fs::path> subdirs;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_directory(ec))
      subdirs.push_back(entry.path());
    else if (input_file_index(entry.path()) >= 0)
      has_input_files = true;
  }
  if (ec) return fail(ErrorCode::kIo, dir.string() + ": cannot list: " + ec.message());
  if (has_input_files && !subdirs.empty())
    return fail(ErrorCode::kInvalidArgument,
                dir.string() + " holds both input_<i> files and sample folders (" +
                    subdirs.front().filename().string() + "); put every sample in its own folder");
  if (has_input_files) {
    HONE_TRY(Sample s, load_one_sample(dir, g));
    return std::vector<Sample>{std::move(s)};
  }
  if (subdirs.empty())
    return fail(ErrorCode::kNotFound, dir.string() +
                                          ": no samples (expected input_<i>.pb / input_<i>.npy "
                                          "files, or one folder of them per sample)");
  std::sort(subdirs.begin(), subdirs.end());
  std::vector<Sample> out;
  for (const fs::path& sub : subdirs) {
    HONE_TRY(Sample s, load_one_sample(sub, g));
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace hone
