#include "hone/random_samples.h"

#include <set>
#include <utility>

#include <fmt/core.h>

#include "core/log.h"
#include "passes/dim_bounds.h"

namespace hone {

Result<Tensor> random_input(const Value& v, const std::map<std::string, int64_t>& dims,
                            std::mt19937_64& rng) {
  if (v.kind != ValueKind::kTensor)
    return fail(ErrorCode::kUnsupported,
                "input '" + v.name + "' is a sequence or optional; random inputs are tensors only");
  if (!v.shape)
    return fail(ErrorCode::kInvalidArgument,
                "input '" + v.name + "' has unknown rank; give it with --inputs DIR");
  std::vector<int64_t> shape;
  for (const Dim& d : v.shape->dims()) {
    if (d.is_static())
      shape.push_back(d.value());
    else if (d.is_symbolic() && dims.count(d.symbol_name()))
      shape.push_back(dims.at(d.symbol_name()));
    else
      shape.push_back(1);
  }
  auto t = random_tensor(v.dtype, shape, rng);
  if (!t) return fail(std::move(t).error().add_context("for input '" + v.name + "'"));
  return t;
}

std::string leading_symbol(const Graph& g) {
  for (ValueId id : g.inputs()) {
    const Value& v = g.value(id);
    if (v.shape && v.shape->rank() > 0 && v.shape->dims()[0].is_symbolic())
      return v.shape->dims()[0].symbol_name();
  }
  return "";
}

std::map<std::string, int64_t> declared_dims(const std::vector<DimDeclaration>& decls) {
  std::map<std::string, int64_t> dims;
  for (const auto& d : decls)
    dims[d.name] = d.kind == DimSpec::Kind::kStatic ? d.size : d.bounds.opt;
  return dims;
}

std::string AssumedDim::describe() const {
  const DimBounds& b = declaration.bounds;
  const std::string where =
      graph_limit   ? fmt::format("the model's shapes take at most {}", *graph_limit)
      : fits_at_one ? fmt::format("nothing in the model bounds it; {} is hone's default", b.max)
                    : fmt::format(
                          "the model's shapes do not hold at 1, so it may fix this dim; "
                          "{} is hone's default",
                          b.max);
  return fmt::format(
      "dim '{}' is not bounded by samples or --dim: assuming {}:{}:{} ({}); set it with --dim "
      "{}=MIN:OPT:MAX",
      declaration.name, b.min, b.opt, b.max, where, declaration.name);
}

std::vector<AssumedDim> assume_unbounded_dims(const Graph& g, std::vector<DimDeclaration>& dims) {
  std::set<std::string> known;
  for (const DimDeclaration& d : dims) known.insert(d.name);
  known.insert(leading_symbol(g));
  // The symbols in input order, each once; the others sit at their declared
  // size (or opt) and the batch at 1 while one is probed.
  std::vector<std::string> open;
  for (ValueId id : g.inputs()) {
    const Value& v = g.value(id);
    if (v.kind != ValueKind::kTensor || !v.shape) continue;
    for (const Dim& d : v.shape->dims())
      if (d.is_symbolic() && known.insert(d.symbol_name()).second) open.push_back(d.symbol_name());
  }
  std::vector<AssumedDim> assumed;
  if (open.empty()) return assumed;
  std::map<std::string, int64_t> at = declared_dims(dims);
  if (const std::string batch = leading_symbol(g); !batch.empty()) at.try_emplace(batch, 1);
  for (const std::string& s : open) at[s] = 1;
  for (const std::string& s : open) {
    AssumedDim a;
    a.declaration.name = s;
    a.declaration.kind = DimSpec::Kind::kDynamic;
    // Probed past the assumed max, so a limit the graph sets is reported as such.
    constexpr int64_t kProbeLimit = 8192;
    const std::optional<int64_t> limit = passes::largest_fitting_dim(g, at, s, kProbeLimit);
    int64_t max = kAssumedDimMax;
    a.fits_at_one = !limit || *limit > 0;
    if (limit && *limit > 0) {
      a.graph_limit = *limit;
      max = std::min(max, *limit);
    }
    a.declaration.bounds = {1, std::min(kAssumedDimOpt, max), max};
    at[s] = a.declaration.bounds.opt;
    HONE_LOG_WARN("{}", a.describe());
    dims.push_back(a.declaration);
    assumed.push_back(std::move(a));
  }
  return assumed;
}

Result<std::vector<Sample>> random_samples_with(const Graph& g, std::map<std::string, int64_t> dims,
                                                const std::vector<DimDeclaration>& decls,
                                                std::vector<int64_t>& batch_sizes, uint64_t seed,
                                                const InputMaker& make) {
  const std::string batch = leading_symbol(g);
  if (batch_sizes.empty() && !batch.empty()) {
    batch_sizes = {1, 8};
    for (const auto& d : decls)
      if (d.name == batch && d.kind != DimSpec::Kind::kStatic)
        batch_sizes = {d.bounds.min, d.bounds.max};
  }
  std::vector<int64_t> sizes = batch.empty() ? std::vector<int64_t>{1} : batch_sizes;
  std::vector<Sample> samples;
  std::mt19937_64 rng(seed);
  for (int64_t b : sizes) {
    if (!batch.empty()) dims[batch] = b;
    std::vector<Tensor> inputs;
    for (ValueId id : g.inputs()) {
      HONE_TRY(Tensor t, make(g.value(id), dims, rng));
      inputs.push_back(std::move(t));
    }
    samples.push_back(sample_in_graph_order(g, std::move(inputs)));
  }
  return samples;
}

Result<std::vector<Sample>> random_samples(const Graph& g, const std::vector<DimDeclaration>& decls,
                                           std::vector<int64_t>& batch_sizes, uint64_t seed) {
  return random_samples_with(g, declared_dims(decls), decls, batch_sizes, seed, random_input);
}

Sample sample_in_graph_order(const Graph& g, std::vector<Tensor> inputs) {
  bool keys_ok = true;
  for (ValueId id : g.inputs()) {
    const std::string& n = g.value(id).name;
    keys_ok = keys_ok && !n.empty() && n.find_first_of(".[]") == std::string::npos;
  }
  if (keys_ok) {
    SampleMap m;
    for (size_t i = 0; i < inputs.size(); ++i)
      m.emplace(g.value(g.inputs()[i]).name, std::move(inputs[i]));
    return Sample(std::move(m));
  }
  // Names such as "x.1" cannot be map keys of a sample path; a list binds by position.
  SampleList l;
  for (Tensor& t : inputs) l.emplace_back(std::move(t));
  return Sample(std::move(l));
}

}  // namespace hone
