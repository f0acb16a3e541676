// .hone packages: a tuned model saved as one file that loads and runs
// elsewhere without tuning again.
//
//   HONE_CHECK_OK(hone::save(tuned, "model.hone"));
//   HONE_TRY(TunedModel m, hone::load("model.hone"));      // verified, no re-tuning
//   HONE_TRY(std::string text, hone::describe_package("model.hone"));
//
// A package is a stored zip: manifest.json (format version, model hash,
// GraphSpec, decision with backend, config key and fields, kernel plan,
// measured figures, environment fingerprint), model.onnx, backend/ (what the
// chosen backend saved), report.json, optionally samples/input_<i>.npy (one
// input sample), and checksums.json with the SHA-256 of
// every entry. The manifest's config fields are the decision's, but for the
// backend's records of timed choices (Backend::choice_records()), taken as
// they stand at save: choices timed after the tune (a shape first run since)
// are saved and replayed untimed too; report.json keeps the decision as the
// tune made it. save() is atomic: a crash never leaves a half file nor
// destroys the package that was there. load() verifies the sums, the format
// version and the environment, and refuses entries that escape the package;
// it loads the package's native code only when a trusted key signed it.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "hone/error.h"
#include "hone/registry.h"
#include "hone/tensor.h"
#include "hone/tune.h"

namespace hone {

struct LoadOptions {
  /// When the package was tuned on another machine (CPU, ISA features,
  /// threads, library versions): false is an error saying what differs;
  /// true logs a warning and rebuilds the backend from the graph instead of
  /// restoring its saved state.
  bool allow_env_mismatch = false;
  /// Threads to run with; -1: the thread count the package was tuned with.
  int threads = -1;
  /// Where the backend comes from; null: default_registry().
  const BackendRegistry* registry = nullptr;
  /// Public-key files trusted to sign native code (signing.h); the keys
  /// folder's keys are added to them.
  std::vector<std::filesystem::path> trusted_keys;
  /// Native code (an ELF library, such as aot's model.so) in a package that
  /// no trusted key signed is withheld from the backend, which rebuilds it
  /// from source; true loads it all the same (with a warning).
  bool allow_unsigned_native = false;
};

struct SaveOptions {
  /// One input sample in graph input order (e.g. the smallest tuning sample),
  /// stored as samples/input_<i>.npy so that `hone bench PKG` can run the
  /// package on the inputs it was tuned with. Empty: no samples stored.
  std::vector<Tensor> sample_inputs;
};

[[nodiscard]] Result<void> save(const TunedModel& model, const std::filesystem::path& file,
                                const SaveOptions& options = {});
/// The sample save() stored (graph input order), verified like every entry.
/// kNotFound when the package stores none.
[[nodiscard]] Result<std::vector<Tensor>> load_package_samples(const std::filesystem::path& file);
[[nodiscard]] Result<TunedModel> load(const std::filesystem::path& file,
                                      const LoadOptions& options = {});
/// What the package holds and how it was chosen, for people (`hone describe`).
[[nodiscard]] Result<std::string> describe_package(const std::filesystem::path& file);
/// The verified manifest.json text, for machines (`hone describe --json`).
[[nodiscard]] Result<std::string> package_manifest(const std::filesystem::path& file);

}  // namespace hone
