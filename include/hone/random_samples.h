// Seeded random samples for tuning without real data: what `hone tune`
// without --samples, the C API's hone_tune and Python's hone.tune(path)
// without samples all use, so the three tune on the same inputs.
//
//   std::vector<int64_t> batches;                       // empty: chosen here
//   HONE_TRY(auto samples, hone::random_samples(graph, dims, batches, /*seed=*/1));
//   HONE_TRY(TunedModel m, hone::tune(graph, samples, MaxThroughput(), {.batch_sizes = batches}));
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "hone/error.h"
#include "hone/graph.h"
#include "hone/graph_spec.h"
#include "hone/sample.h"
#include "hone/tensor.h"

namespace hone {

/// Seeded random values for graph input `v`: floats uniform in [-1,1),
/// integers in [0,9], bools 50/50; symbolic dims from `dims`, else 1.
/// kUnsupported for sequence/optional inputs, kInvalidArgument for an input
/// of unknown rank.
[[nodiscard]] Result<Tensor> random_input(const Value& v,
                                          const std::map<std::string, int64_t>& dims,
                                          std::mt19937_64& rng);

/// The name of `g`'s batch dim as its inputs spell it: the symbolic leading
/// dim of the first input that has one ("" when none does).
std::string leading_symbol(const Graph& g);

/// A symbolic input dim that neither a sample nor a declaration bounds, and
/// the bounds hone assumed for it.
struct AssumedDim {
  DimDeclaration declaration;  ///< dynamic, 1:opt:max
  /// The largest size the graph's own shapes take (a 512-row position table
  /// gives 512); unset when nothing in the graph bounds the dim.
  std::optional<int64_t> graph_limit;
  /// False when the model's shapes do not even hold at size 1: the model
  /// likely fixes the dim to a size only a sample or --dim can give.
  bool fits_at_one = true;
  /// What to tell the user: the bounds, where they come from, how to set them.
  std::string describe() const;
};

/// Sizes assumed for an unbounded dim: max kAssumedDimMax, or the graph's
/// limit when lower, and opt kAssumedDimOpt, or max when lower.
inline constexpr int64_t kAssumedDimMax = 512;
inline constexpr int64_t kAssumedDimOpt = 128;

/// For each symbolic dim of `g`'s tensor inputs other than the batch dim
/// (leading_symbol) that `dims` does not declare, a dynamic declaration
/// 1:opt:max (the sizes above, bounded by what the graph's shapes take:
/// passes' largest fitting size), appended to `dims` and returned, so
/// tuning without samples covers real inputs instead of fixing the dim at 1.
/// Each is logged at warning level (describe()), before any tuning output.
std::vector<AssumedDim> assume_unbounded_dims(const Graph& g, std::vector<DimDeclaration>& dims);

/// One random sample per batch size, so tuning can learn the batch axis.
/// When `batch_sizes` is empty and the graph has a batch dim it becomes the
/// declared batch bounds' {min, max}, else {1, 8}; it is left as chosen, for
/// TuneOptions::batch_sizes. Other symbolic dims take their declared opt, else 1.
[[nodiscard]] Result<std::vector<Sample>> random_samples(const Graph& g,
                                                         const std::vector<DimDeclaration>& dims,
                                                         std::vector<int64_t>& batch_sizes,
                                                         uint64_t seed);

/// Makes graph input `v`'s tensor for one sample, symbolic dims from `dims`.
using InputMaker = std::function<Result<Tensor>(
    const Value& v, const std::map<std::string, int64_t>& dims, std::mt19937_64& rng)>;

/// random_samples() with the caller's dims (declared opt sizes, plus any the
/// caller binds; the batch dim is set per sample) and its way of making each
/// input (`hone tune`'s --fill/--range); `decls` still gives the batch bounds.
[[nodiscard]] Result<std::vector<Sample>> random_samples_with(
    const Graph& g, std::map<std::string, int64_t> dims, const std::vector<DimDeclaration>& decls,
    std::vector<int64_t>& batch_sizes, uint64_t seed, const InputMaker& make);

/// The dims random_samples() starts from: each declaration's static size or opt.
std::map<std::string, int64_t> declared_dims(const std::vector<DimDeclaration>& decls);

/// One call's inputs, `inputs[i]` for the graph's input i: a map by input
/// name, or a list (bound by position) when a name cannot be a sample path
/// key (empty, or with '.', '[' or ']', as PyTorch's "x.1").
Sample sample_in_graph_order(const Graph& g, std::vector<Tensor> inputs);

}  // namespace hone
