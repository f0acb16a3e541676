// The folder a user named, as export writes it: "out/" and "out" are one
// folder (a trailing separator leaves a path with no file name, whose parent
// would be the folder itself). Internal to src/package.
#pragma once

#include <filesystem>

namespace hone::package {

inline std::filesystem::path folder_path(std::filesystem::path p) {
  while (!p.has_filename() && p.has_relative_path()) p = p.parent_path();
  return p;
}

}  // namespace hone::package
