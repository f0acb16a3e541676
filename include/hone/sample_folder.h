// The check of a one-sample input folder (input_<i>.pb / input_<i>.npy)
// before any file in it is read, so that nothing a user put there is
// silently ignored.
//
//   HONE_CHECK_OK(hone::check_input_folder("in", graph.inputs().size()));
//   HONE_TRY(Tensor t, hone::load_input_file("in", 0));   // hone/sample.h
#pragma once

#include <cstddef>
#include <filesystem>

#include "hone/error.h"

namespace hone {

/// kInvalidArgument naming the file for an input_<i> file with
/// i >= num_inputs (it would be ignored) or an input given as both .pb and
/// .npy; kNotFound when `dir` is not a folder.
[[nodiscard]] Result<void> check_input_folder(const std::filesystem::path& dir, size_t num_inputs);

}  // namespace hone
