// Private to the aot backend: a saved block's block.json, every field hone
// reads checked first, so a hostile package's file is an error naming the
// field, never an exception.
//
//   HONE_TRY(BlockMeta m, parse_block_meta(text, dir / "block.json"));
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hone/error.h"

namespace hone::aot {

/// What hone reads of a saved block's block.json.
struct BlockMeta {
  std::vector<std::string> cpu_features;
  std::string sha_library, sha_weights, sha_source;
  std::string runtime;  // "abiN-<hash>" of the C runtime it was made with; empty before it was kept
  nlohmann::json toolchain;
};

/// kCorrupt naming the field when `text` (the contents of `file`) is not a
/// saved aot block's metadata.
[[nodiscard]] Result<BlockMeta> parse_block_meta(const std::string& text,
                                                 const std::filesystem::path& file);

}  // namespace hone::aot
