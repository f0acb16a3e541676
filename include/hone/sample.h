// hone::SampleValue: one call's inputs (or outputs) as a tree of named maps,
// lists (and tuples), tensors and plain numbers, addressed by paths.
//
//   Sample s = SampleMap{{"image", img}, {"meta", SampleMap{{"masks", SampleList{m0, m1}}}}};
//   const SampleValue* m1 = s.find("meta.masks[1]");   // nullptr when absent
//   for (auto& [path, leaf] : s.leaves()) ...          // "image", "meta.masks[0]", ...
//
// Paths join map keys with '.' and list items with "[i]"; the root's own path
// is "". A map key that is empty or contains '.', '[' or ']' cannot appear in
// a path: check_sample() reports such keys. Map keys are kept sorted, so the
// order of leaves() (depth-first) is deterministic. Empty maps and lists have
// no leaves, so they do not survive leaves() -> sample_from_leaves().
// Values are cheap to copy: tensors share their bytes (see tensor.h).
// Thread-safety: const access from many threads is safe.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "hone/error.h"
#include "hone/tensor.h"

namespace hone {

class SampleValue;
using SampleMap =
    std::map<std::string, SampleValue>;       // keys sorted: flatten order is deterministic
using SampleList = std::vector<SampleValue>;  // lists and tuples

class SampleValue {
 public:
  enum class Kind : uint8_t { kTensor, kScalar, kMap, kList };

  SampleValue();               // an empty map
  SampleValue(Tensor t);       // NOLINT: leaves convert implicitly, so trees read like literals
  SampleValue(double scalar);  // NOLINT
  SampleValue(SampleMap m);    // NOLINT
  SampleValue(SampleList l);   // NOLINT

  Kind kind() const { return static_cast<Kind>(value_.index()); }
  bool is_tensor() const { return kind() == Kind::kTensor; }
  bool is_scalar() const { return kind() == Kind::kScalar; }
  bool is_map() const { return kind() == Kind::kMap; }
  bool is_list() const { return kind() == Kind::kList; }
  /// Tensors and scalars.
  bool is_leaf() const { return is_tensor() || is_scalar(); }

  /// The held value; throws std::bad_variant_access when the kind differs.
  const Tensor& tensor() const { return std::get<Tensor>(value_); }
  double scalar() const { return std::get<double>(value_); }
  const SampleMap& map() const { return std::get<SampleMap>(value_); }
  const SampleList& list() const { return std::get<SampleList>(value_); }
  SampleMap& map() { return std::get<SampleMap>(value_); }
  SampleList& list() { return std::get<SampleList>(value_); }

  /// Leaves (tensors and scalars) depth-first, map keys in order, with their
  /// paths relative to the root: "image", "meta.scale", "meta.masks[1]"; a
  /// bare tensor root has path "". Pointers point into this tree.
  std::vector<std::pair<std::string, const SampleValue*>> leaves() const;
  /// The node at `path` ("meta.masks[1]", "" for the root), or nullptr when
  /// there is none or the path is malformed.
  const SampleValue* find(std::string_view path) const;
  SampleValue* find(std::string_view path);
  /// Human-readable shape of the tree:
  /// {image: f32[2,3,8,8], meta: {masks: [f32[2,4], f32[2,4]], scale: 0.5}}
  std::string describe() const;

 private:
  // Index order matches Kind.
  std::variant<Tensor, double, SampleMap, SampleList> value_;
};

using Sample = SampleValue;  // one call's inputs

/// Builds a tree from (path, value) pairs, the inverse of leaves(). Errors
/// (kInvalidArgument): a malformed path, the same path twice, a path that is
/// both a leaf and a container or both a map and a list ("a.b" and "a[0]"),
/// list items with gaps ("masks[0]" and "masks[2]" without "masks[1]").
[[nodiscard]] Result<SampleValue> sample_from_leaves(
    const std::vector<std::pair<std::string, SampleValue>>& leaves);

/// Every map key can be written in a path and every tensor is defined;
/// kInvalidArgument naming the offending path otherwise.
[[nodiscard]] Result<void> check_sample(const SampleValue& sample);

/// Checks that `path` is well formed ("a.b[2].c", "[0]", ""); kInvalidArgument
/// naming the position of the problem otherwise.
[[nodiscard]] Result<void> check_path(std::string_view path);

/// Seeded random values of `dtype`: floats uniform in [-1,1), integers in
/// [0,9], bools 50/50. The same rng state gives the same values. kUnsupported
/// for kUndefined; kInvalidArgument for negative dims.
[[nodiscard]] Result<Tensor> random_tensor(DType dtype, const std::vector<int64_t>& shape,
                                           std::mt19937_64& rng);

/// Reads one input tensor of a sample folder: DIR/input_<i>.pb (a TensorProto)
/// when it exists, else DIR/input_<i>.npy. kNotFound when neither exists,
/// kUnsupported for a .pb holding a sequence or optional, and the loaders'
/// own errors (kCorrupt ...) naming the file.
[[nodiscard]] Result<Tensor> load_input_file(const std::filesystem::path& dir, size_t i);

}  // namespace hone
