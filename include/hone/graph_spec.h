// hone::GraphSpec: how a model's input and output trees map onto the graph's
// flat inputs and outputs, and which axes are the batch axis and other
// dynamic axes, with their min/opt/max bounds.
//
//   HONE_TRY(GraphSpec spec, GraphSpec::learn(graph, samples, {seq_decl}));
//   HONE_TRY(Sample s8, spec.rebatch(samples[0], 8));  HONE_TRY(auto flat, spec.flatten(s8));
//   HONE_TRY(Sample out, spec.unflatten_outputs(*backend->infer(flat)));
//
// Binding leaves to graph inputs: a leaf binds to the graph input whose name
// equals its path; when no leaf path equals any graph input name, leaves bind
// positionally (depth-first leaf order) and the counts must match. A bare
// tensor root binds to a single-input graph.
// The output tree: a bare tensor for a single output, else a map from output
// name to tensor; an output whose name is a path ("boxes.xy", "masks[0]") sits
// at that path. set_output_paths() overrides this.
// Dims: a graph's symbolic dims name axes; samples give bounds (min and max
// seen, opt the most common value, ties to the larger). Across samples, an
// axis whose size varies is dynamic; axes that vary together share a name; the
// batch dim is a dim named batch/N/batch_size, else a varying dim that sits at
// axis 0 of every tensor that has it. Declarations override names and bounds
// but must agree with every sample.
// Thread-safety: a const GraphSpec may be used from many threads.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "hone/dtype.h"
#include "hone/error.h"
#include "hone/graph.h"
#include "hone/sample.h"
#include "hone/tensor.h"

namespace hone {

struct DimBounds {
  int64_t min = 1, opt = 1, max = 1;
  bool operator==(const DimBounds&) const = default;
};

/// One axis of one tensor.
struct DimSpec {
  enum class Kind : uint8_t { kStatic, kBatch, kDynamic };
  Kind kind = Kind::kStatic;
  int64_t size = 0;  // kStatic
  /// kBatch/kDynamic: shared name ("batch", "seq"); bounds in GraphSpec::bounds.
  /// An output axis nobody could name (no symbol, not learned) is kDynamic
  /// with an empty name and has no bounds.
  std::string name;
  bool operator==(const DimSpec&) const = default;
};

struct TensorSpec {
  std::string path;  // path in the input/output tree ("meta.masks[1]")
  std::string name;  // the graph input/output value name
  DType dtype = DType::kUndefined;
  bool scalar_leaf = false;  // the user passes a plain number (a 0-d tensor for the graph)
  /// False for an output whose rank nobody knows (then `dims` is empty).
  bool rank_known = true;
  std::vector<DimSpec> dims;
  int batch_axis = -1;  // -1: no batch axis
  bool operator==(const TensorSpec&) const = default;
};

/// What a user declares: --dim seq=1:16:64, or static, or batch.
struct DimDeclaration {
  std::string name;
  DimSpec::Kind kind = DimSpec::Kind::kDynamic;
  DimBounds bounds;  // kBatch/kDynamic
  int64_t size = 0;  // kStatic
};

/// "NAME=MIN:OPT:MAX" (dynamic), "NAME=V" (static), "batch=1:8:32" (the name
/// "batch" makes it the batch dim). kInvalidArgument naming the text otherwise.
[[nodiscard]] Result<DimDeclaration> parse_dim_declaration(std::string_view text);

class GraphSpec {
 public:
  std::vector<TensorSpec> inputs;   // in graph input order
  std::vector<TensorSpec> outputs;  // in graph output order
  /// Every batch/dynamic dim name of the inputs (output-only names have none).
  std::map<std::string, DimBounds> bounds;
  std::string batch_dim;  // name of the batch dim, empty if none

  /// Learns the spec of `g` from samples (>= 1; >= 2 distinct batch sizes to
  /// learn a batch axis from data alone) and declarations (which win, but
  /// must agree with the samples: a conflict is kInvalidArgument naming the
  /// path, axis and sizes). kUnsupported for sequence/optional graph inputs.
  [[nodiscard]] static Result<GraphSpec> learn(const Graph& g, const std::vector<Sample>& samples,
                                               const std::vector<DimDeclaration>& declared = {});

  /// Names output axes the graph left unnamed from what the model returned:
  /// `outputs[s]` are the graph outputs for `samples[s]`. An unnamed axis
  /// whose sizes follow exactly one input dim (the batch dim first) takes its
  /// name; unknown ranks become known. Errors when outputs disagree with the
  /// spec's dtypes or static dims.
  [[nodiscard]] Result<void> learn_outputs(const std::vector<Sample>& samples,
                                           const std::vector<std::vector<Tensor>>& outputs);

  /// Sample tree -> graph inputs in graph order (scalars become 0-d tensors of
  /// the input's dtype). Checks structure, dtypes, static sizes and bounds:
  /// errors (kInvalidArgument) name the path, axis, size and bounds.
  [[nodiscard]] Result<std::vector<Tensor>> flatten(const Sample& sample) const;
  /// Graph outputs -> the output tree. Checks count, dtypes, ranks and static dims.
  [[nodiscard]] Result<SampleValue> unflatten_outputs(std::vector<Tensor> outputs) const;
  /// Replaces the output tree's paths (one per graph output, in order); ""
  /// only for a single output. kInvalidArgument for bad or conflicting paths.
  [[nodiscard]] Result<void> set_output_paths(std::vector<std::string> paths);

  /// Values of every batch/dynamic dim in `flat` (graph-order tensors); error
  /// when a tensor's rank, a static size or a bound is violated, or one name
  /// has two values.
  [[nodiscard]] Result<std::map<std::string, int64_t>> bind_dims(
      const std::vector<Tensor>& flat) const;
  /// The batch size of a sample (1 when there is no batch axis).
  [[nodiscard]] Result<int64_t> batch_size(const Sample& sample) const;
  /// Slices (batch smaller) or repeats cyclically (batch larger) every batched
  /// leaf along its batch axis; other leaves are kept. kFailedPrecondition
  /// without a batch dim; bounds are not checked here (flatten checks them).
  [[nodiscard]] Result<Sample> rebatch(const Sample& sample, int64_t batch) const;
  /// Seeded random sample: dims from `dims`, the others at their opt; floats
  /// uniform [-1,1), ints [0,9], bools 50/50. Errors for unknown names and
  /// values outside the bounds.
  [[nodiscard]] Result<Sample> random_sample(const std::map<std::string, int64_t>& dims,
                                             uint64_t seed) const;

  /// Internal consistency: paths, dtypes, batch axes, bounds of every name.
  [[nodiscard]] Result<void> validate() const;
  /// Deterministic JSON text (sorted keys) and back; from_json validates and
  /// errors (kCorrupt) say which field is wrong.
  std::string to_json() const;
  [[nodiscard]] static Result<GraphSpec> from_json(std::string_view text);
  /// Stable 16-hex-digit hash (FNV-1a 64) of to_json(), for cache keys.
  std::string key() const;
  /// "batch=16,seq=32": each named dim's max bound, sorted by name, for
  /// backends that size their buffers by bounds (aot's `dim_bounds` field).
  std::string max_bounds_text() const;
  /// Multi-line human description for `hone describe` and reports.
  std::string describe() const;

  bool operator==(const GraphSpec&) const = default;
};

/// Samples from a folder: DIR/<sub>/input_<i>.{pb,npy} per sample folder
/// (sorted by name), or DIR/input_<i>.* as one sample. Leaves bind
/// positionally to g's inputs: each sample is a map from input name to
/// tensor. Errors name the file (a missing input, an unreadable file, a file
/// beyond the model's input count).
[[nodiscard]] Result<std::vector<Sample>> load_samples(const std::filesystem::path& dir,
                                                       const Graph& g);

}  // namespace hone
