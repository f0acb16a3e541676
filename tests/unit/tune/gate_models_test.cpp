// The calibrated gate on real models: on every model of a list (models/*.onnx,
// plus the entries of $HONE_GATE_MODELS, colon-separated, each PATH or
// PATH@KEY=V,KEY=V where a key is a symbolic dim to fix, or `inputs` naming a
// folder of input_<i>.npy files, one per graph input in order, used as the
// one sample), the correct backends (onednn, blas, aot) pass, and a backend
// whose one op's result is off by 1% is rejected wherever that op sits (first,
// middle and last heavy op of the graph; a model whose heavy ops all sit in
// If/Loop bodies, as Silero VAD's, has the op spoiled in every body of that
// node). tests/corpus/gate_test.sh runs it on the real-model corpus.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>
#include <set>

#include <fmt/core.h>
#include <gtest/gtest.h>

#include "hone/npy.h"
#include "hone/onnx.h"
#include "hone/random_samples.h"
#include "hone/registry.h"
#include "hone/strategy.h"
#include "hone/tune.h"

namespace hone {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> gate_models() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(fs::path(HONE_SOURCE_DIR) / "models"))
    if (e.path().extension() == ".onnx") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  if (const char* extra = std::getenv("HONE_GATE_MODELS"); extra != nullptr) {
    std::string s = extra;
    for (size_t at = 0; at <= s.size();) {
      const size_t colon = std::min(s.find(':', at), s.size());
      if (colon > at) out.push_back(s.substr(at, colon - at));
      at = colon + 1;
    }
  }
  return out;
}

/// The ops whose result the wrong backend spoils: the heavy ones a backend's
/// own kernels compute.
const std::set<std::string> kHeavyOps = {"Conv", "ConvTranspose", "Gemm", "MatMul",
                                         "LSTM", "GRU",           "RNN"};

/// The reference, except that every f32 output of node `target` is off by
/// 1%: y * (1 + 0.01 * sign(sin(1000 y))), so each element moves by 1% up or
/// down (a plain scale would vanish behind a normalization).
/// A node of the graph, or (inner >= 0) the inner-th heavy op in each body of that node.
struct Target {
  NodeId node = -1;
  int inner = -1;
};

std::vector<NodeId> heavy_nodes(const Graph& g) {
  std::vector<NodeId> heavy;
  auto order = g.topological_order();
  if (!order) return heavy;
  for (NodeId id : *order)
    if (kHeavyOps.count(g.node(id).op_type)) heavy.push_back(id);
  return heavy;
}

/// Every f32 output y of node `target` becomes y * (1 + 0.01 * sign(sin(1000 y))).
void spoil(Graph& g, NodeId target) {
  const ValueId k = g.add_initializer("__gate_k", Tensor::scalar<float>(1000.0f));
  const ValueId c = g.add_initializer("__gate_c", Tensor::scalar<float>(0.01f));
  const std::vector<ValueId> outs = g.node(target).outputs;
  for (size_t o = 0; o < outs.size(); ++o) {
    const ValueId y = outs[o];
    if (y == kNoValue || g.value(y).name.empty() || g.value(y).dtype != DType::kF32) continue;
    Value raw = g.value(y);
    raw.name += "__unperturbed";
    const ValueId r = g.add_value(raw);
    g.node(target).outputs[o] = r;
    g.value(r).producer = target;
    g.value(y).producer = -1;  // the Add below produces it now
    const ValueId s =
        g.add_node("Sign", {g.add_node("Sin", {g.add_node("Mul", {r, k}, 1)[0]}, 1)[0]}, 1)[0];
    const ValueId d = g.add_node("Mul", {r, g.add_node("Mul", {s, c}, 1)[0]}, 1)[0];
    Node add;
    add.name = "__gate_perturb_" + std::to_string(o);
    add.op_type = "Add";
    add.inputs = {r, d};
    add.outputs = {y};
    g.add_node_with_outputs(std::move(add));
  }
}

class OnePercentOff final : public Backend {
 public:
  explicit OnePercentOff(Target target) : target_(target) {
    inner_ = std::move(*default_registry().create("reference"));
  }
  std::string_view name() const override { return "one-percent-off"; }
  const BackendCapabilities& capabilities() const override { return inner_->capabilities(); }

 protected:
  Result<void> do_build(const Graph& graph) override {
    Graph g = graph;
    if (target_.inner < 0) {
      spoil(g, target_.node);
    } else {
      // The k-th heavy op of every body of the node.
      Node& holder = g.node(target_.node);
      for (auto& [key, attr] : holder.attrs)
        if (auto* body = std::get_if<std::shared_ptr<const Graph>>(&attr); body && *body) {
          Graph copy = **body;
          const std::vector<NodeId> heavy = heavy_nodes(copy);
          if (heavy.empty()) continue;
          spoil(copy,
                heavy[std::min<size_t>(static_cast<size_t>(target_.inner), heavy.size() - 1)]);
          *body = std::make_shared<const Graph>(std::move(copy));
        }
    }
    return inner_->build(g);
  }
  Result<std::vector<Tensor>> do_infer(const std::vector<Tensor>& in) const override {
    return inner_->infer(in);
  }

 private:
  Target target_;
  std::unique_ptr<Backend> inner_;
};

struct Entry {
  std::string path;
  std::map<std::string, int64_t> dims;
  std::string inputs;  // a folder of input_<i>.npy, or empty
};

/// PATH@KEY=V,KEY=V split into the path, the dims and the inputs folder.
Entry parse_entry(const std::string& entry) {
  const size_t at = entry.find('@');
  Entry e{entry.substr(0, at), {}, {}};
  if (at == std::string::npos) return e;
  std::string rest = entry.substr(at + 1);
  for (size_t i = 0; i <= rest.size();) {
    const size_t comma = std::min(rest.find(',', i), rest.size());
    const std::string kv = rest.substr(i, comma - i);
    if (const size_t eq = kv.find('='); eq != std::string::npos) {
      if (kv.substr(0, eq) == "inputs")
        e.inputs = kv.substr(eq + 1);
      else
        e.dims[kv.substr(0, eq)] = std::stoll(kv.substr(eq + 1));
    }
    i = comma + 1;
  }
  return e;
}

/// The one sample of a folder of input_<i>.npy files.
Result<std::vector<Sample>> samples_from(const Graph& g, const fs::path& dir) {
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    HONE_TRY(Tensor t, load_npy(dir / ("input_" + std::to_string(i) + ".npy")));
    inputs.push_back(std::move(t));
  }
  return std::vector<Sample>{sample_in_graph_order(g, std::move(inputs))};
}

/// Random samples: floats in [-1, 1), integers in [0, 9]; the leading
/// symbolic dim of the first input is the batch (1 and 2, unless `dims`
/// fixes it), other symbols as `dims` says, else 5.
std::vector<Sample> samples_for(const Graph& g, const std::map<std::string, int64_t>& dims) {
  std::string batch;
  for (ValueId id : g.inputs())
    if (const Value& v = g.value(id);
        v.shape && v.shape->rank() > 0 && v.shape->dims()[0].is_symbolic()) {
      batch = v.shape->dims()[0].symbol_name();
      break;
    }
  if (dims.count(batch)) batch.clear();
  std::mt19937_64 rng(7);
  std::vector<Sample> out;
  for (int64_t b : batch.empty() ? std::vector<int64_t>{1} : std::vector<int64_t>{1, 2}) {
    SampleMap m;
    for (ValueId id : g.inputs()) {
      const Value& v = g.value(id);
      std::vector<int64_t> shape;
      for (const Dim& d : v.shape->dims()) {
        const auto it = d.is_static() ? dims.end() : dims.find(d.symbol_name());
        shape.push_back(d.is_static()              ? d.value()
                        : it != dims.end()         ? it->second
                        : d.symbol_name() == batch ? b
                                                   : 5);
      }
      Tensor t = Tensor::zeros(v.dtype, shape);
      for (int64_t i = 0; i < t.numel(); ++i) {
        if (v.dtype == DType::kF32)
          t.span<float>()[static_cast<size_t>(i)] =
              std::uniform_real_distribution<float>(-1, 1)(rng);
        else if (v.dtype == DType::kI64)
          t.span<int64_t>()[static_cast<size_t>(i)] = static_cast<int64_t>(rng() % 10);
      }
      m.emplace(v.name, std::move(t));
    }
    out.emplace_back(std::move(m));
  }
  return out;
}

TuneOptions quick(const BackendRegistry* reg) {
  TuneOptions o;
  o.registry = reg;
  o.use_cache = false;
  o.threads = 1;
  o.candidate_budget_s = 0.2;
  o.profile.warmup = 1;
  o.profile.min_runs = 3;
  o.profile.window = 3;
  o.profile.max_runs = 5;
  return o;
}

std::string figures(const CorrectnessResult& c) {
  std::string s = c.truth;
  for (const OutputCheck& o : c.outputs)
    s += fmt::format(
        "; {}: rel L2 {:.2e} (ref {:.2e}, bound {:.2e}), max {:.2e} (ref {:.2e}, "
        "bound {:.2e})",
        o.output, o.rel_l2, o.ref_rel_l2, o.bound_rel_l2, o.max_err, o.ref_max_err,
        o.bound_max_err);
  return s;
}

class GateOnModel : public ::testing::TestWithParam<std::string> {};

TEST_P(GateOnModel, CorrectBackendsPassAndOneOpOffByOnePercentFails) {
  const Entry e = parse_entry(GetParam());
  const std::string& path = e.path;
  if (!fs::exists(path)) GTEST_SKIP() << path << " is not installed";
  auto g = onnx::load_model(path);
  ASSERT_TRUE(g) << g.error().to_string();
  std::vector<Sample> samples;
  if (e.inputs.empty()) {
    samples = samples_for(*g, e.dims);
  } else {
    auto s = samples_from(*g, e.inputs);
    ASSERT_TRUE(s) << s.error().to_string();
    samples = std::move(*s);
  }

  for (const char* name : {"onednn", "blas", "aot"}) {
    const auto* entry = default_registry().find(name);
    if (entry == nullptr || !entry->unavailable().empty()) continue;  // not on this machine
    auto m = tune(*g, samples, OneBackend(name, /*fallback_when_slower=*/false), quick(nullptr));
    ASSERT_TRUE(m) << name << ": " << m.error().to_string();
    for (const auto& c : m->report().candidates)
      if (c.backend == name) {
        EXPECT_TRUE(c.correctness.passed) << name << ": " << c.correctness.message;
        EXPECT_EQ(c.correctness.truth, "f64 reference");
        std::printf("[gate] %s %s pass: %s\n", fs::path(path).filename().c_str(), name,
                    figures(c.correctness).c_str());
      }
  }

  std::vector<Target> targets;
  const std::vector<NodeId> heavy = heavy_nodes(*g);
  for (size_t i : {size_t{0}, heavy.size() / 2, heavy.size() - 1})
    if (!heavy.empty()) targets.push_back({heavy[i], -1});
  if (heavy.empty())
    for (const Node& n : g->nodes())
      for (const auto& [key, attr] : n.attrs)
        if (auto* body = std::get_if<std::shared_ptr<const Graph>>(&attr); body && *body) {
          const size_t count = heavy_nodes(**body).size();
          if (count == 0 || !targets.empty()) continue;
          const NodeId id = static_cast<NodeId>(&n - g->nodes().data());
          for (size_t i : {size_t{0}, count / 2, count - 1})
            targets.push_back({id, static_cast<int>(i)});
        }
  ASSERT_FALSE(targets.empty()) << "no heavy op to spoil in " << GetParam();
  for (const Target target : targets) {
    const std::string where =
        g->node(target.node).describe() +
        (target.inner < 0 ? "" : " (heavy op " + std::to_string(target.inner) + " of its bodies)");
    BackendRegistry reg;
    register_reference(reg);
    ASSERT_TRUE(reg.add({"one-percent-off",
                         "the reference with one op off by 1% (test)",
                         reg.find("reference")->capabilities,
                         [target] { return std::make_unique<OnePercentOff>(target); },
                         {}}));
    auto m = tune(*g, samples, OneBackend("one-percent-off", false), quick(&reg));
    ASSERT_FALSE(m) << "node " << where << " off by 1% passed the gate";
    EXPECT_EQ(m.error().code(), ErrorCode::kFailedPrecondition) << m.error().to_string();
    EXPECT_NE(m.error().message().find("wrong results"), std::string::npos)
        << m.error().to_string();
    std::printf("[gate] %s node %s off by 1%%: %s\n", fs::path(path).filename().c_str(),
                where.c_str(), m.error().message().c_str());
  }
}

INSTANTIATE_TEST_SUITE_P(Models, GateOnModel, ::testing::ValuesIn(gate_models()),
                         [](const ::testing::TestParamInfo<std::string>& p) {
                           std::string n = fs::path(parse_entry(p.param).path).stem().string();
                           for (char& ch : n)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n + "_" + std::to_string(p.index);
                         });

}  // namespace
}  // namespace hone
