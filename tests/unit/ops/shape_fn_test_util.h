// What the shape-function tests (shape_fn_test.cpp, shape_fn_tensor_test.cpp,
// shape_fn_nn_test.cpp) share: dims of both kinds and the error check.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hone/error.h"
#include "hone/shape.h"

namespace hone::ops::shape_fn_test {

using Ints = std::vector<int64_t>;
using Dims = std::vector<Dim>;

inline const Dim kBatch = Dim::symbol("batch");
inline const Dim kSeq = Dim::symbol("seq");

/// `r` failed with `code` and a message containing `text` (each mismatch is
/// also reported as a test failure).
template <class T>
bool fails_with(const Result<T>& r, ErrorCode code, const std::string& text) {
  if (r) return false;
  EXPECT_EQ(r.error().code(), code) << r.error().message();
  EXPECT_NE(r.error().message().find(text), std::string::npos) << r.error().message();
  return r.error().code() == code && r.error().message().find(text) != std::string::npos;
}

}  // namespace hone::ops::shape_fn_test
