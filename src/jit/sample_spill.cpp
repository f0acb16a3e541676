#include "jit/sample_spill.h"

#include <fmt/core.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <system_error>

#include "core/log.h"
#include "hone/file_io.h"
#include "hone/npy.h"

namespace hone::jit_internal {

namespace fs = std::filesystem;

SampleSpill::SampleSpill(fs::path dir, std::string tag, bool keep)
    : dir_(std::move(dir)), tag_(std::move(tag)), keep_(keep) {}

SampleSpill::~SampleSpill() {
  if (keep_) return;
  std::error_code ec;
  for (const auto& f : written_) fs::remove(f, ec);
  // Only a folder this store made, and only when nothing else lives there.
  if (created_dir_ && fs::is_empty(dir_, ec) && !ec) fs::remove(dir_, ec);
}

Result<void> SampleSpill::write(const Sample& sample) {
  std::lock_guard lock(mu_);
  std::error_code ec;
  if (!fs::exists(dir_, ec)) {
    fs::create_directories(dir_, ec);
    if (ec)
      return fail(ErrorCode::kIo, fmt::format("cannot create the spill folder '{}': {}",
                                              dir_.string(), ec.message()));
    created_dir_ = true;
  }
  const size_t n = manifests_.size();
  nlohmann::json leaves = nlohmann::json::array();
  std::vector<fs::path> files;
  auto undo = [&] {
    for (const auto& f : files) fs::remove(f, ec);
  };
  size_t k = 0;
  for (const auto& [path, v] : sample.leaves()) {
    nlohmann::json leaf{{"path", path}};
    if (v->is_scalar()) {
      leaf["scalar"] = v->scalar();
    } else {
      const std::string name = fmt::format("spill_{}_{}_{}.npy", tag_, n, k++);
      if (auto ok = save_npy(v->tensor(), dir_ / name); !ok) {
        undo();
        return fail(std::move(ok).error().add_context("while spilling a recorded JIT sample"));
      }
      files.push_back(dir_ / name);
      leaf["npy"] = name;
    }
    leaves.push_back(std::move(leaf));
  }
  const fs::path manifest = dir_ / fmt::format("spill_{}_{}.json", tag_, n);
  if (auto ok = write_file_atomic(manifest, nlohmann::json{{"leaves", leaves}}.dump()); !ok) {
    undo();
    return fail(std::move(ok).error().add_context("while spilling a recorded JIT sample"));
  }
  files.push_back(manifest);
  manifests_.push_back(manifest);
  written_.insert(written_.end(), files.begin(), files.end());
  return {};
}

Result<std::vector<Sample>> SampleSpill::read_all() const {
  std::lock_guard lock(mu_);
  std::vector<Sample> out;
  for (const auto& m : manifests_) {
    const std::string ctx = "while reading the spilled JIT sample '" + m.string() + "'";
    std::ifstream in(m, std::ios::binary);
    if (!in) return fail(Error(ErrorCode::kIo, "cannot open the file").add_context(ctx));
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.contains("leaves") || !j["leaves"].is_array())
      return fail(Error(ErrorCode::kCorrupt, "not a spilled-sample manifest").add_context(ctx));
    std::vector<std::pair<std::string, SampleValue>> leaves;
    for (const auto& leaf : j["leaves"]) {
      if (!leaf.contains("path") || !leaf["path"].is_string())
        return fail(Error(ErrorCode::kCorrupt, "a leaf without a path").add_context(ctx));
      if (leaf.contains("scalar") && leaf["scalar"].is_number()) {
        leaves.emplace_back(leaf["path"].get<std::string>(), leaf["scalar"].get<double>());
      } else if (leaf.contains("npy") && leaf["npy"].is_string()) {
        HONE_TRY(Tensor t, load_npy(dir_ / leaf["npy"].get<std::string>()));
        leaves.emplace_back(leaf["path"].get<std::string>(), std::move(t));
      } else {
        return fail(
            Error(ErrorCode::kCorrupt, "a leaf with neither a scalar nor a .npy").add_context(ctx));
      }
    }
    auto s = sample_from_leaves(leaves);
    if (!s) return fail(std::move(s).error().add_context(ctx));
    out.push_back(std::move(*s));
  }
  return out;
}

size_t SampleSpill::count() const {
  std::lock_guard lock(mu_);
  return manifests_.size();
}

}  // namespace hone::jit_internal
