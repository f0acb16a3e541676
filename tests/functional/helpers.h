// Helpers for functional tests: build a backend from a BACKENDS row, and
// compare a backend's outputs with the reference interpreter's.
#pragma once

#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "functional/backends.h"
#include "hone/graph.h"
#include "hone/registry.h"
#include "hone/sample.h"
#include "hone/strategy.h"
#include "hone/tune.h"

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

/// A registry with one entry per BACKENDS row, made by the row's factory
/// (so HONE_BREAK_BACKEND reaches tuning too). Tuning in the suite uses it.
const BackendRegistry& case_registry();
/// Backends case_registry() has created so far (a dry run must not add any).
int case_backends_created();
/// OneBackend on the row's backend, pinned: never swapped for the reference.
std::unique_ptr<Strategy> pinned_strategy(const BackendCase& c);
/// Quick tuning on case_registry(): 1 thread, no cache, short profiling.
TuneOptions quick_tune_options();
/// Sample trees for a graph whose inputs are named by path, from Seeded::inputs.
Sample sample_from(const Graph& g, const std::vector<Tensor>& inputs);
/// The tuned model really runs on `key`: the decision and the backend name it,
/// and one inference of `probe` raises that backend's execution counter.
testing::AssertionResult selected_backend(const TunedModel& tuned, const std::string& key,
                                          const Sample& probe);
/// tuned vs the reference on seeded random inputs at every batch size given,
/// with each seed; other symbolic dims at `dims`.
testing::AssertionResult assert_matches_reference(const TunedModel& tuned, const Graph& g,
                                                  const Tolerance& tolerance,
                                                  const std::vector<int64_t>& batch_sizes,
                                                  const std::vector<uint64_t>& seeds,
                                                  const std::map<std::string, int64_t>& dims = {});

}  // namespace hone::functional
