// Helpers for functional tests: build a backend from a BACKENDS row, and
// compare a backend's outputs with the reference interpreter's.
#pragma once

#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "functional/backends.h"
#include "hone/graph.h"

namespace hone::functional {

/// A fresh backend from the row's factory, built on `g`.
Result<std::unique_ptr<Backend>> build_backend(const BackendCase& c, const Graph& g);

/// Runs `g` on the reference backend and on `be` with the same inputs and
/// compares every output within the row's tolerance.
testing::AssertionResult matches_reference(const BackendCase& c, const Graph& g,
                                           const std::vector<Tensor>& inputs, const Backend& be);

/// Running a batch equals running each sample alone and stacking (batch axis 0).
testing::AssertionResult batch_consistent(const BackendCase& c, const Backend& be,
                                          const std::vector<Tensor>& batch_inputs);

}  // namespace hone::functional
