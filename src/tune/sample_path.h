// Paths into sample trees ("meta.masks[1]"), parsed into segments. Internal to
// src/tune: sample.cpp and graph_spec*.cpp share one parser.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "hone/error.h"

namespace hone::tuning {

struct PathSegment {
  bool is_index = false;
  std::string key;   // map key when !is_index
  size_t index = 0;  // list item when is_index
};

/// Splits a path into segments; "" is the root (no segments).
[[nodiscard]] Result<std::vector<PathSegment>> parse_path(std::string_view path);

/// Whether `key` can be a map key in a path (non-empty, no '.', '[' or ']').
bool is_path_key(std::string_view key);

/// The path of child `key` / item `index` under `parent`.
std::string child_path(const std::string& parent, std::string_view key);
std::string item_path(const std::string& parent, size_t index);

/// "'x'" for messages, or "the root" for "".
std::string quote_path(std::string_view path);

}  // namespace hone::tuning
