// Recorded JIT samples written to a folder when memory's share is full, and
// read back for the tune. Internal to src/jit.
//
// Sample n is spill_<tag>_<n>.json (the tree: each leaf's path and either a
// scalar or the name of its .npy) plus one spill_<tag>_<n>_<k>.npy per tensor
// leaf. Every file is written atomically, the .json last, so a sample without
// its .json was never complete. The store removes what it wrote (and the
// folder, when it created it and it is empty) on destruction unless kept.
#pragma once

#include <cstddef>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "hone/error.h"
#include "hone/sample.h"

namespace hone::jit_internal {

class SampleSpill {
 public:
  /// `tag` keeps the files of several models apart in one folder.
  SampleSpill(std::filesystem::path dir, std::string tag, bool keep);
  ~SampleSpill();
  SampleSpill(const SampleSpill&) = delete;
  SampleSpill& operator=(const SampleSpill&) = delete;

  /// Writes one sample. kIo naming the file on failure (nothing of it is left).
  [[nodiscard]] Result<void> write(const Sample& sample);
  /// Every sample written, in order.
  [[nodiscard]] Result<std::vector<Sample>> read_all() const;
  size_t count() const;

 private:
  std::filesystem::path dir_;
  std::string tag_;
  bool keep_ = false;
  bool created_dir_ = false;
  mutable std::mutex mu_;
  std::vector<std::filesystem::path> manifests_;
  std::vector<std::filesystem::path> written_;  // every file, for removal
};

}  // namespace hone::jit_internal
