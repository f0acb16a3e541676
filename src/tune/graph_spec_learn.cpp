// GraphSpec::learn: the structure of a model's inputs and outputs from its
// graph, samples and declarations; and parse_dim_declaration.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <set>

#include "hone/graph_spec.h"
#include "tune/graph_spec_internal.h"
#include "tune/sample_path.h"

namespace hone {
namespace {

using tuning::quote_path;
using tuning::where;

Result<int64_t> parse_size(std::string_view text, std::string_view whole) {
  int64_t v = -1;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size() || v < 0 || text.empty())
    return fail(ErrorCode::kInvalidArgument, "dim declaration '" + std::string(whole) + "': '" +
                                                 std::string(text) +
                                                 "' is not a non-negative integer");
  return v;
}

bool is_batch_like(std::string_view name) {
  std::string lower;
  for (char c : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower == "batch" || lower == "n" || lower == "batch_size" || lower == "batchsize" ||
         lower == "bs";
}

std::string join(const std::vector<std::string>& xs) {
  std::string out;
  for (const auto& x : xs) out += (out.empty() ? "" : ", ") + x;
  return out.empty() ? "none" : out;
}

// Which leaf of sample 0 feeds each graph input.
Result<std::vector<size_t>> bind_leaves(const std::vector<std::string>& paths,
                                        const std::vector<std::string>& names) {
  const std::string leaf_list = join(paths);
  const std::string input_list = join(names);
  if (paths.size() == 1 && paths[0].empty()) {
    if (names.size() != 1)
      return fail(ErrorCode::kInvalidArgument,
                  "the sample is a bare tensor, but the model has " + std::to_string(names.size()) +
                      " inputs (" + input_list + "); pass a map or list with one leaf per input");
    return std::vector<size_t>{0};
  }
  bool by_name = false;
  for (const auto& p : paths) by_name |= std::find(names.begin(), names.end(), p) != names.end();
  std::vector<size_t> out;
  if (!by_name) {
    if (paths.size() != names.size())
      return fail(ErrorCode::kInvalidArgument,
                  "the sample has " + std::to_string(paths.size()) + " leaves (" + leaf_list +
                      ") but the model has " + std::to_string(names.size()) + " inputs (" +
                      input_list + "); no leaf path is an input name, so they bind by position");
    for (size_t i = 0; i < names.size(); ++i) out.push_back(i);
    return out;
  }
  for (const auto& p : paths)
    if (std::find(names.begin(), names.end(), p) == names.end())
      return fail(ErrorCode::kInvalidArgument,
                  "sample leaf '" + p + "' names no input of the model (inputs: " + input_list +
                      "); leaves bind by name because some leaf paths are input names");
  for (const auto& n : names) {
    auto it = std::find(paths.begin(), paths.end(), n);
    if (it == paths.end())
      return fail(ErrorCode::kInvalidArgument,
                  "the sample has no leaf for input '" + n + "' (leaves: " + leaf_list + ")");
    out.push_back(static_cast<size_t>(it - paths.begin()));
  }
  return out;
}

// Learning state for one named dim.
struct NamedDim {
  std::string name;
  bool generated = false;       // no graph symbol: named by learn()
  std::vector<int64_t> values;  // one per sample
  std::string first_at;         // "'x' (input 'x') axis 0"
  bool all_axis0 = true;
  bool twice_in_a_tensor = false;
  int tensors = 0;
  bool varies() const {
    return std::any_of(values.begin(), values.end(), [&](int64_t v) { return v != values[0]; });
  }
};

DimBounds bounds_of(const std::vector<int64_t>& values) {
  std::map<int64_t, int> count;
  for (int64_t v : values) ++count[v];
  DimBounds b{count.begin()->first, count.begin()->first, count.rbegin()->first};
  int best = 0;
  for (const auto& [v, c] : count)  // ascending, so >= makes ties go to the larger
    if (c >= best) best = c, b.opt = v;
  return b;
}

Result<void> check_bounds(const DimDeclaration& d, bool is_batch) {
  const DimBounds& b = d.bounds;
  if (b.min < (is_batch ? 1 : 0) || b.min > b.opt || b.opt > b.max)
    return fail(ErrorCode::kInvalidArgument, "declared " + d.name + "=" + std::to_string(b.min) +
                                                 ":" + std::to_string(b.opt) + ":" +
                                                 std::to_string(b.max) + ": bounds must satisfy " +
                                                 (is_batch ? "1" : "0") + " <= min <= opt <= max");
  return {};
}

}  // namespace

Result<DimDeclaration> parse_dim_declaration(std::string_view text) {
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0)
    return fail(ErrorCode::kInvalidArgument,
                "dim declaration '" + std::string(text) +
                    "' is not NAME=MIN:OPT:MAX or NAME=SIZE (for example seq=1:16:64)");
  DimDeclaration d;
  d.name = std::string(text.substr(0, eq));
  const std::string_view rest = text.substr(eq + 1);
  std::vector<std::string_view> parts;
  for (size_t start = 0;;) {
    const size_t colon = rest.find(':', start);
    parts.push_back(rest.substr(start, colon - start));
    if (colon == std::string_view::npos) break;
    start = colon + 1;
  }
  if (parts.size() == 1) {
    d.kind = DimSpec::Kind::kStatic;
    HONE_TRY(d.size, parse_size(parts[0], text));
    return d;
  }
  if (parts.size() != 3)
    return fail(ErrorCode::kInvalidArgument, "dim declaration '" + std::string(text) +
                                                 "': give MIN:OPT:MAX (three numbers) or one size");
  HONE_TRY(d.bounds.min, parse_size(parts[0], text));
  HONE_TRY(d.bounds.opt, parse_size(parts[1], text));
  HONE_TRY(d.bounds.max, parse_size(parts[2], text));
  d.kind = d.name == "batch" ? DimSpec::Kind::kBatch : DimSpec::Kind::kDynamic;
  HONE_CHECK_OK(check_bounds(d, d.kind == DimSpec::Kind::kBatch));
  return d;
}

Result<GraphSpec> GraphSpec::learn(const Graph& g, const std::vector<Sample>& samples,
                                   const std::vector<DimDeclaration>& declared) {
  if (samples.empty())
    return fail(ErrorCode::kInvalidArgument, "learning a GraphSpec needs at least one sample");
  for (size_t s = 0; s < samples.size(); ++s)
    HONE_CHECK_OK_CTX(check_sample(samples[s]), "in sample " + std::to_string(s));

  std::vector<std::string> names;
  for (ValueId id : g.inputs()) {
    const Value& v = g.value(id);
    if (v.kind != ValueKind::kTensor)
      return fail(ErrorCode::kUnsupported, "input '" + v.name +
                                               "' is a sequence or optional; GraphSpec "
                                               "describes tensor inputs only");
    names.push_back(v.name);
  }

  // Structure: every sample has the leaves of sample 0, of the same kinds.
  const auto leaves0 = samples[0].leaves();
  std::vector<std::string> paths;
  for (const auto& [p, leaf] : leaves0) paths.push_back(p);
  for (size_t s = 1; s < samples.size(); ++s) {
    const auto leaves = samples[s].leaves();
    for (size_t i = 0; i < std::max(leaves.size(), leaves0.size()); ++i) {
      if (i < leaves.size() && i < leaves0.size() && leaves[i].first == leaves0[i].first) {
        if (leaves[i].second->kind() != leaves0[i].second->kind())
          return fail(ErrorCode::kInvalidArgument,
                      quote_path(paths[i]) + " is a " +
                          (leaves0[i].second->is_tensor() ? "tensor" : "number") +
                          " in sample 0 but not in sample " + std::to_string(s));
        continue;
      }
      const bool extra = i < leaves.size() && !samples[0].find(leaves[i].first);
      const std::string p = extra ? leaves[i].first : leaves0[i].first;
      return fail(ErrorCode::kInvalidArgument,
                  "samples differ in structure: " + quote_path(p) + " is in sample " +
                      (extra ? std::to_string(s) : "0") + " but not in sample " +
                      (extra ? "0" : std::to_string(s)) + " (sample 0: " + samples[0].describe() +
                      ", sample " + std::to_string(s) + ": " + samples[s].describe() + ")");
    }
  }
  HONE_TRY(std::vector<size_t> leaf_of, bind_leaves(paths, names));

  GraphSpec spec;
  // shapes[k][s]: the shape input k has in sample s.
  std::vector<std::vector<std::vector<int64_t>>> shapes(names.size());
  for (size_t k = 0; k < names.size(); ++k) {
    const Value& v = g.value(g.inputs()[k]);
    TensorSpec t;
    t.path = paths[leaf_of[k]];
    t.name = v.name;
    t.scalar_leaf = leaves0[leaf_of[k]].second->is_scalar();
    t.dtype = v.dtype != DType::kUndefined ? v.dtype
              : t.scalar_leaf              ? DType::kF32
                                           : leaves0[leaf_of[k]].second->tensor().dtype();
    if (t.scalar_leaf && v.shape && v.shape->rank() != 0)
      return fail(ErrorCode::kInvalidArgument, where(t) + " is a number, but the model takes " +
                                                   std::string(dtype_name(v.dtype)) +
                                                   v.shape->to_string() + "; pass a tensor");
    for (size_t s = 0; s < samples.size(); ++s) {
      const SampleValue& leaf = *samples[s].find(t.path);
      const std::string in_sample = "in sample " + std::to_string(s);
      if (leaf.is_tensor() && leaf.tensor().dtype() != t.dtype)
        return fail(ErrorCode::kInvalidArgument,
                    where(t) + " is " + leaf.tensor().describe() + " in sample " +
                        std::to_string(s) + " but the model takes " +
                        std::string(dtype_name(t.dtype)) +
                        (v.shape ? v.shape->to_string() : std::string("[?...]")));
      auto x = tuning::leaf_to_tensor(leaf, t);
      if (!x) return fail(std::move(x).error().add_context(in_sample));
      const std::vector<int64_t>& shape = x->shape();
      const size_t rank = v.shape             ? v.shape->rank()
                          : shapes[k].empty() ? shape.size()
                                              : shapes[k][0].size();
      if (shape.size() != rank)
        return fail(
            ErrorCode::kInvalidArgument,
            where(t) + " is " + x->describe() + " in sample " + std::to_string(s) + ", but " +
                (v.shape
                     ? "the model takes rank " + std::to_string(rank) + ": " + v.shape->to_string()
                     : "rank " + std::to_string(rank) + " in sample 0"));
      if (v.shape)
        for (size_t a = 0; a < rank; ++a) {
          const Dim& d = (*v.shape)[a];
          if (d.is_static() && d.value() != shape[a])
            return fail(ErrorCode::kInvalidArgument,
                        where(t) + " axis " + std::to_string(a) + " is " +
                            std::to_string(shape[a]) + " in sample " + std::to_string(s) +
                            ", but the model fixes it at " + std::to_string(d.value()));
        }
      shapes[k].push_back(shape);
    }
    spec.inputs.push_back(std::move(t));
  }

  // Name the axes: graph symbols first, then unknown axes that vary, which
  // join a symbol that varies the same way or share a generated name.
  std::vector<NamedDim> dims;
  auto find_dim = [&](const std::string& name) -> NamedDim* {
    for (auto& d : dims)
      if (d.name == name) return &d;
    return nullptr;
  };
  // axis_dim[k][a]: index into dims, -1 for static axes; static_size[k][a] then.
  std::vector<std::vector<int>> axis_dim(names.size());
  auto use = [&](size_t k, size_t a, int index) {
    NamedDim& d = dims[static_cast<size_t>(index)];
    const auto& ad = axis_dim[k];
    if (std::find(ad.begin(), ad.end(), index) != ad.end())
      d.twice_in_a_tensor = true;
    else
      ++d.tensors;
    d.all_axis0 &= a == 0;
    axis_dim[k][a] = index;
  };
  std::set<std::string> taken;
  for (ValueId id : g.inputs())
    if (g.value(id).shape)
      for (const Dim& d : g.value(id).shape->dims())
        if (d.is_symbolic()) taken.insert(d.symbol_name());
  for (ValueId id : g.outputs())
    if (g.value(id).shape)
      for (const Dim& d : g.value(id).shape->dims())
        if (d.is_symbolic()) taken.insert(d.symbol_name());

  for (size_t k = 0; k < names.size(); ++k) {
    const Value& v = g.value(g.inputs()[k]);
    const size_t rank = shapes[k][0].size();
    axis_dim[k].assign(rank, -1);
    if (!v.shape) continue;
    for (size_t a = 0; a < rank; ++a) {
      const Dim& gd = (*v.shape)[a];
      if (!gd.is_symbolic()) continue;
      std::vector<int64_t> values;
      for (const auto& sh : shapes[k]) values.push_back(sh[a]);
      const std::string at = where(spec.inputs[k]) + " axis " + std::to_string(a);
      NamedDim* d = find_dim(gd.symbol_name());
      if (!d) {
        dims.push_back({gd.symbol_name(), false, values, at});
        d = &dims.back();
      }
      for (size_t s = 0; s < values.size(); ++s)
        if (d->values[s] != values[s])
          return fail(ErrorCode::kInvalidArgument,
                      "in sample " + std::to_string(s) + ", dim '" + d->name + "' is " +
                          std::to_string(d->values[s]) + " at " + d->first_at + " but " +
                          std::to_string(values[s]) + " at " + at);
      use(k, a, static_cast<int>(d - dims.data()));
    }
  }
  for (size_t k = 0; k < names.size(); ++k) {
    const Value& v = g.value(g.inputs()[k]);
    for (size_t a = 0; a < axis_dim[k].size(); ++a) {
      if (axis_dim[k][a] >= 0 || (v.shape && (*v.shape)[a].is_static())) continue;
      std::vector<int64_t> values;
      for (const auto& sh : shapes[k]) values.push_back(sh[a]);
      if (std::all_of(values.begin(), values.end(), [&](int64_t x) { return x == values[0]; }))
        continue;  // unknown but constant in every sample: static at that size
      int match = -1;
      for (size_t i = 0; i < dims.size() && match < 0; ++i)
        if (dims[i].values == values) match = static_cast<int>(i);
      if (match < 0) {
        dims.push_back({"", true, values, where(spec.inputs[k]) + " axis " + std::to_string(a)});
        match = static_cast<int>(dims.size()) - 1;
      }
      use(k, a, match);
    }
  }

  // The batch dim.
  const DimDeclaration* batch_decl = nullptr;
  std::set<std::string> declared_names;
  for (const DimDeclaration& d : declared) {
    if (d.name.empty())
      return fail(ErrorCode::kInvalidArgument, "a dim declaration has an empty name");
    if (!declared_names.insert(d.name).second)
      return fail(ErrorCode::kInvalidArgument, "dim '" + d.name + "' is declared twice");
    if (d.kind == DimSpec::Kind::kBatch) {
      if (batch_decl)
        return fail(ErrorCode::kInvalidArgument,
                    "two batch dims declared: '" + batch_decl->name + "' and '" + d.name + "'");
      batch_decl = &d;
    }
  }
  // A graph symbol with a batch-like name, else the varying dim that sits at
  // axis 0 of every tensor that has it (in the most tensors, then the first).
  int batch = -1;
  for (size_t i = 0; i < dims.size() && batch < 0; ++i)
    if (!dims[i].generated && is_batch_like(dims[i].name) && !dims[i].twice_in_a_tensor)
      batch = static_cast<int>(i);
  for (size_t i = 0; i < dims.size() && batch < 0; ++i) {
    const NamedDim& d = dims[i];
    if (!d.varies() || !d.all_axis0 || d.twice_in_a_tensor) continue;
    bool best = true;
    for (size_t j = 0; j < dims.size(); ++j)
      if (dims[j].varies() && dims[j].all_axis0 && !dims[j].twice_in_a_tensor &&
          dims[j].tensors > d.tensors)
        best = false;
    if (best) batch = static_cast<int>(i);
  }
  // Generated names: "batch" for the batch dim found so far, else dim0,
  // dim1, ... (before declarations, so they can name a generated dim).
  for (const auto& d : dims) taken.insert(d.name);
  int next = 0;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (!dims[i].generated || !dims[i].name.empty()) continue;
    std::string name = static_cast<int>(i) == batch ? "batch" : "";
    while (name.empty() || taken.count(name)) name = "dim" + std::to_string(next++);
    dims[i].name = name;
    taken.insert(name);
  }
  if (batch_decl) {
    NamedDim* named = find_dim(batch_decl->name);
    if (named) {
      if (named->twice_in_a_tensor)
        return fail(ErrorCode::kInvalidArgument,
                    "declared batch dim '" + batch_decl->name + "' appears twice in one tensor");
      batch = static_cast<int>(named - dims.data());
    } else if (batch >= 0 && dims[static_cast<size_t>(batch)].generated) {
      dims[static_cast<size_t>(batch)].name = batch_decl->name;
    } else if (batch < 0) {
      std::vector<std::string> known;
      for (const auto& d : dims) known.push_back(d.name);
      return fail(ErrorCode::kInvalidArgument,
                  "declared batch dim '" + batch_decl->name +
                      "' matches no axis: the model's dims are " + join(known) +
                      ", and no axis varies at axis 0 across the samples");
    }
  }
  if (batch >= 0) spec.batch_dim = dims[static_cast<size_t>(batch)].name;

  // Bounds from the samples, then the declarations.
  std::map<std::string, int64_t> static_size;
  for (const auto& d : dims) spec.bounds[d.name] = bounds_of(d.values);
  for (const DimDeclaration& decl : declared) {
    const bool is_batch = &decl == batch_decl;
    const std::string name = is_batch ? spec.batch_dim : decl.name;
    NamedDim* d = find_dim(name);
    if (!d) {
      std::vector<std::string> known;
      for (const auto& x : dims) known.push_back(x.name);
      return fail(ErrorCode::kInvalidArgument,
                  "declared dim '" + decl.name +
                      "' is not a dim of the model's inputs (dims: " + join(known) + ")");
    }
    for (size_t s = 0; s < d->values.size(); ++s) {
      const int64_t v = d->values[s];
      const bool ok = decl.kind == DimSpec::Kind::kStatic
                          ? v == decl.size
                          : v >= decl.bounds.min && v <= decl.bounds.max;
      if (!ok)
        return fail(
            ErrorCode::kInvalidArgument,
            "declared " + decl.name + "=" +
                (decl.kind == DimSpec::Kind::kStatic
                     ? std::to_string(decl.size)
                     : std::to_string(decl.bounds.min) + ":" + std::to_string(decl.bounds.opt) +
                           ":" + std::to_string(decl.bounds.max)) +
                " conflicts with sample " + std::to_string(s) + ", where " + d->first_at + " is " +
                std::to_string(v));
    }
    if (decl.kind == DimSpec::Kind::kStatic) {
      static_size[name] = decl.size;
      spec.bounds.erase(name);
      if (name == spec.batch_dim) spec.batch_dim.clear();
    } else {
      HONE_CHECK_OK(check_bounds(decl, is_batch || name == spec.batch_dim));
      spec.bounds[name] = decl.bounds;
    }
  }

  for (size_t k = 0; k < names.size(); ++k) {
    TensorSpec& t = spec.inputs[k];
    for (size_t a = 0; a < axis_dim[k].size(); ++a) {
      DimSpec ds;
      if (axis_dim[k][a] < 0) {
        ds.size = shapes[k][0][a];
      } else if (const std::string& n = dims[static_cast<size_t>(axis_dim[k][a])].name;
                 static_size.count(n)) {
        ds.size = static_size[n];
      } else {
        ds.kind = n == spec.batch_dim ? DimSpec::Kind::kBatch : DimSpec::Kind::kDynamic;
        ds.name = n;
      }
      t.dims.push_back(ds);
    }
    t.batch_axis = tuning::first_batch_axis(t);
  }

  // Outputs from the graph's declared types; a symbol shared with the inputs
  // is the same dim.
  std::vector<std::string> out_names;
  for (ValueId id : g.outputs()) {
    const Value& v = g.value(id);
    TensorSpec t;
    t.name = v.name;
    t.dtype = v.dtype;
    t.rank_known = v.shape.has_value();
    if (v.shape)
      for (const Dim& gd : v.shape->dims()) {
        DimSpec ds;
        if (gd.is_static()) {
          ds.size = gd.value();
        } else if (gd.is_symbolic() && static_size.count(gd.symbol_name())) {
          ds.size = static_size[gd.symbol_name()];
        } else {
          ds.kind = gd.is_symbolic() && gd.symbol_name() == spec.batch_dim
                        ? DimSpec::Kind::kBatch
                        : DimSpec::Kind::kDynamic;
          ds.name = gd.symbol_name();
        }
        t.dims.push_back(ds);
      }
    t.batch_axis = tuning::first_batch_axis(t);
    out_names.push_back(v.name);
    spec.outputs.push_back(std::move(t));
  }
  HONE_CHECK_OK(spec.set_output_paths(tuning::default_output_paths(out_names)));
  HONE_CHECK_OK_CTX(spec.validate(), "while checking the learned spec");
  return spec;
}

}  // namespace hone
