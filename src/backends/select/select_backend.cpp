#include "backends/select/select_backend.h"

#include <algorithm>
#include <chrono>
#include <set>

#include <fmt/core.h>

#include "backends/common/choice_text.h"
#include "core/log.h"
#include "core/split.h"
#include "eval/interpreter.h"
#include "hone/registry.h"

namespace hone::select {
namespace {

const std::set<std::string>& heavy_ops() {
  static const std::set<std::string> ops = {"Conv", "ConvTranspose", "MatMul",
                                            "Gemm", "LSTM",          "GRU"};
  return ops;
}

/// The CPU backends whose kernels compete, the one that runs the rest first.
const std::vector<std::string>& contenders() {
  static const std::vector<std::string> names = {"onednn", "blas", "aot"};
  return names;
}

/// A one-block backend as a compiled block.
class BackendBlock final : public CompiledBlock {
 public:
  explicit BackendBlock(std::shared_ptr<Backend> be) : be_(std::move(be)) {}
  Result<std::vector<Tensor>> run(const std::vector<Tensor>& inputs) const override {
    return be_->infer(inputs);
  }

 private:
  std::shared_ptr<Backend> be_;  // RegistryCompiler::built() watches it
};

bool selectable_name(const std::string& name) {
  return !name.empty() && name.find(';') == std::string::npos && name != "-";
}

/// dim_bounds text ("batch=8,seq=128") as a map; bad entries are an error.
Result<std::map<std::string, int64_t>> parse_bounds(const std::string& text) {
  std::map<std::string, int64_t> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find_first_of(",;", pos);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(pos, end - pos);
    pos = end + 1;
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    int64_t v = 0;
    try {
      v = eq == std::string::npos ? -1 : std::stoll(item.substr(eq + 1));
    } catch (const std::exception&) {
      v = -1;
    }
    if (v <= 0)
      return fail(ErrorCode::kInvalidArgument,
                  "select dim_bounds entry '" + item + "': expected NAME=POSITIVE_INTEGER");
    out[item.substr(0, eq)] = v;
  }
  return out;
}

/// Deterministic inputs for the graph: random floats in [-1, 1), zero integers
/// (always valid indices), symbolic dims at their bound or 1.
Result<std::vector<Tensor>> problem_inputs(const Graph& g,
                                           const std::map<std::string, int64_t>& bounds) {
  std::vector<Tensor> out;
  uint64_t state = 0x9e3779b97f4a7c15ull;
  for (ValueId v : g.inputs()) {
    const Value& val = g.value(v);
    if (!val.shape)
      return fail(ErrorCode::kUnsupported, "input '" + val.name + "' has no known rank");
    std::vector<int64_t> dims;
    for (const Dim& d : val.shape->dims()) {
      if (d.is_static()) {
        dims.push_back(d.value());
      } else if (d.is_symbolic()) {
        auto it = bounds.find(d.symbol_name());
        dims.push_back(it != bounds.end() ? it->second : 1);
      } else {
        dims.push_back(1);
      }
    }
    Tensor t = Tensor::zeros(val.dtype, dims);
    if (val.dtype == DType::kF32)
      for (float& x : t.span<float>()) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        x = static_cast<float>(static_cast<double>(state >> 40) / static_cast<double>(1 << 24)) *
                2.0f -
            1.0f;
      }
    out.push_back(std::move(t));
  }
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

Result<std::unique_ptr<Backend>> RegistryCompiler::create() const {
  HONE_TRY(auto be, default_registry().create(backend_));
  HONE_CHECK_OK(be->configure("threads", std::to_string(owner_->get<int64_t>("threads", 0))));
  for (const char* f : {"min_block_size", "require_full_compilation", "optimize"})
    if (!be->config().has(f))
      return fail(ErrorCode::kInternal, "backend '" + backend_ + "' has no '" + f + "' field");
  HONE_CHECK_OK(be->configure("min_block_size", "1"));
  HONE_CHECK_OK(be->configure("optimize", "false"));
  return be;
}

NodeSupport RegistryCompiler::supports(const Graph& g, const Node& node) const {
  std::lock_guard lock(mu_);
  // Keyed by the graph object; the node names check that it is still the
  // graph planned (a freed graph's address can be reused).
  auto it = refused_.find(&g);
  const auto matches = [&](const Planned& p) {
    if (p.names.size() != g.nodes().size()) return false;
    for (size_t i = 0; i < p.names.size(); ++i)
      if (p.names[i] != g.nodes()[i].name) return false;
    return true;
  };
  if (it == refused_.end() || !matches(it->second)) {
    Planned planned;
    for (const Node& n : g.nodes()) planned.names.push_back(n.name);
    auto be = create();
    Result<Partition> p = be ? (*be)->plan(g) : fail(be.error());
    if (!p) {
      for (size_t i = 0; i < g.nodes().size(); ++i)
        planned.refused[static_cast<NodeId>(i)] =
            backend_ + " cannot plan the graph: " + p.error().message();
    } else {
      for (const auto& [id, why] : p->fallbacks) planned.refused[id] = why;
      // Control flow runs on the executor, never in a block of this compiler's.
      for (const auto& [id, how] : p->controls) planned.refused[id] = "control flow: " + how;
    }
    it = refused_.insert_or_assign(&g, std::move(planned)).first;
  }
  const auto id = static_cast<NodeId>(&node - g.nodes().data());
  auto r = it->second.refused.find(id);
  return r == it->second.refused.end() ? NodeSupport::yes() : NodeSupport::no(r->second);
}

Result<std::unique_ptr<CompiledBlock>> RegistryCompiler::compile(const Graph& block) {
  HONE_TRY(std::shared_ptr<Backend> be, create());
  HONE_CHECK_OK(be->configure("require_full_compilation", "true"));
  // The owner's record (a package's) of what this backend times: replayed untimed.
  for (const std::string& f : be->config().record_fields()) {
    const BackendConfig::Field* own = owner_->find(f);
    if (own == nullptr || !own->record) continue;
    if (const std::string v = owner_->get<std::string>(f, ""); !v.empty())
      HONE_CHECK_OK(be->configure(f, v));
  }
  HONE_CHECK_OK(be->build(block));
  {
    std::lock_guard lock(built_mu_);
    built_.push_back(be);
  }
  return std::unique_ptr<CompiledBlock>(std::make_unique<BackendBlock>(std::move(be)));
}

std::vector<std::shared_ptr<const Backend>> RegistryCompiler::built() const {
  std::lock_guard lock(built_mu_);
  std::vector<std::shared_ptr<const Backend>> out;
  for (const auto& w : built_)
    if (auto b = w.lock()) out.push_back(std::move(b));
  return out;
}

const BackendCapabilities& SelectBackend::caps() {
  static const BackendCapabilities c = [] {
    BackendCapabilities x;
    x.devices = {Device::kCpu};
    x.dtypes = {DType::kF32};
    x.precisions = {Precision::kFp32};
    x.build_mode = BuildMode::kAheadOfTime;
    x.dynamic_shapes = true;
    return x;
  }();
  return c;
}

SelectBackend::SelectBackend()
    : onednn_("onednn", &config()), blas_("blas", &config()), aot_("aot", &config()) {
  mutable_config()
      .declare_record(
          "kernel_choices",
          "per heavy node, the backend that runs it (NODE=WINNER(ACCEPTED+...), ';'-"
          "separated; '-' for none); empty: time the candidates at build and record them here")
      .declare_record("timed_choices",
                      "the choices its blocks' backends made by timing (onednn's timed_choices: "
                      "LABEL|SHAPES|MODE=CHOICE, ';'-separated, '-' for none), one record for all "
                      "of them: each block is given it and replays it untimed; filled from the "
                      "blocks when the backend's records are read (a package's save)")
      .declare("select_margin", int64_t{10},
               "percent a challenger must beat onednn's median by to take a node")
      .declare("dim_bounds", std::string(),
               "NAME=N,...: the size of symbolic dims in the timed problems (else 1)");
  // The islands between placed nodes stay on onednn, however small.
  (void)mutable_config().set_from_string("min_block_size", "1");
}

NodeSupport SelectBackend::supports(const Graph& g, const Node& node) const {
  return onednn_.supports(g, node);
}

Result<std::unique_ptr<CompiledBlock>> SelectBackend::compile(const Graph& block) {
  return onednn_.compile(block);
}

std::vector<BlockCompiler*> SelectBackend::compilers() {
  return {this, &blas_, &aot_};
}

Result<runtime::ExecutorOptions> SelectBackend::executor_options(const Graph& g) const {
  HONE_TRY(runtime::ExecutorOptions o, CompilingBackend::executor_options(g));
  if (planned_ && planned_->made_from(g)) o.optimized = planned_;
  for (const Choice& c : choices_) {
    if (c.winner == "blas") o.placement[c.node] = 1;
    if (c.winner == "aot") o.placement[c.node] = 2;
  }
  return o;
}

Result<std::vector<SelectBackend::Choice>> SelectBackend::parse_choices(
    const std::string& text) const {
  std::vector<Choice> out;
  if (text == "-") return out;
  for (const std::string& item : split(text, ';')) {
    // NODE=WINNER(ACCEPTED+...): split at the last '(' and the '=' before it,
    // so node names may hold '=', '(' or '/'.
    const size_t open = item.rfind('(');
    const size_t eq = open == std::string::npos ? std::string::npos : item.rfind('=', open);
    if (open == std::string::npos || eq == std::string::npos || eq == 0 || !item.ends_with(')'))
      return fail(ErrorCode::kInvalidArgument,
                  "kernel_choices entry '" + item + "': expected NODE=WINNER(ACCEPTED+...)");
    Choice c;
    c.node = item.substr(0, eq);
    c.winner = item.substr(eq + 1, open - eq - 1);
    c.accepted = split(item.substr(open + 1, item.size() - open - 2), '+');
    if (std::find(contenders().begin(), contenders().end(), c.winner) == contenders().end())
      return fail(ErrorCode::kInvalidArgument, "kernel_choices entry '" + item + "': winner '" +
                                                   c.winner + "' is not one of onednn, blas, aot");
    out.push_back(std::move(c));
  }
  return out;
}

Result<std::vector<SelectBackend::Choice>> SelectBackend::choose(const Graph& planned) {
  std::vector<NodeId> heavy;
  for (size_t i = 0; i < planned.nodes().size(); ++i) {
    const Node& n = planned.nodes()[i];
    if (!heavy_ops().contains(n.op_type)) continue;
    if (!selectable_name(n.name)) {
      HONE_LOG_DEBUG("select: {} not selected: its name cannot be recorded", n.describe());
      continue;
    }
    heavy.push_back(static_cast<NodeId>(i));
  }
  std::vector<Choice> out;
  if (heavy.empty()) return out;
  // The problems: each heavy node's inputs as one run of the interpreter makes them.
  HONE_TRY(auto bounds, parse_bounds(config().get<std::string>("dim_bounds", "")));
  HONE_TRY(std::vector<Tensor> inputs, problem_inputs(planned, bounds));
  Graph probe = planned;
  std::vector<ValueId> wanted;
  for (NodeId id : heavy)
    for (ValueId v : planned.node(id).inputs)
      if (v != kNoValue && !planned.value(v).initializer &&
          std::find(wanted.begin(), wanted.end(), v) == wanted.end())
        wanted.push_back(v);
  probe.set_outputs(wanted);
  auto probed = eval::Interpreter().run_tensors(probe, inputs);
  if (!probed)
    return fail(std::move(probed).error().add_context(
        "while making the heavy nodes' inputs for per-op selection (symbolic dims take their "
        "dim_bounds value, else 1: set dim_bounds to the shapes the model runs at)"));
  const std::vector<Tensor>& values = *probed;
  std::map<ValueId, Tensor> at;
  for (size_t i = 0; i < wanted.size(); ++i) at[wanted[i]] = values[i];

  const int64_t margin = config().get<int64_t>("select_margin", 10);
  for (NodeId id : heavy) {
    const Node& n = planned.node(id);
    std::vector<Block> one(1);
    one[0].on_backend = true;
    one[0].nodes = {id};
    fill_block_io(planned, one);
    if (one[0].outputs.empty())
      for (ValueId v : n.outputs)
        if (v != kNoValue && !planned.value(v).name.empty()) one[0].outputs.push_back(v);
    HONE_TRY(Graph single, extract_block(planned, one[0]));
    std::vector<Tensor> ins;
    for (ValueId v : one[0].inputs) ins.push_back(at.at(v));
    // Build each contender on the one-node problem; those that refuse drop out.
    struct Run {
      std::string name;
      std::unique_ptr<Backend> be;
      std::vector<double> ms;
    };
    std::vector<Run> runs;
    for (const std::string& c : contenders()) {
      const auto* entry = default_registry().find(c);
      if (entry == nullptr || !entry->unavailable().empty()) continue;
      RegistryCompiler rc(c, &config());
      auto be = rc.create();
      if (!be) continue;
      if (!(*be)->configure("require_full_compilation", "true")) continue;
      if (auto b = (*be)->build(single); !b) {
        HONE_LOG_DEBUG("select: {}: {} refuses it: {}", n.describe(), c, b.error().message());
        continue;
      }
      if (auto w = (*be)->infer(ins); !w) {
        HONE_LOG_DEBUG("select: {}: {} fails on it: {}", n.describe(), c, w.error().message());
        continue;
      }
      runs.push_back({c, std::move(*be), {}});
    }
    if (runs.empty()) continue;
    // Rounds that alternate the contenders, so drift hits them alike.
    const auto t_end = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
    for (int round = 0; round < 31; ++round) {
      for (Run& r : runs) {
        const auto t0 = std::chrono::steady_clock::now();
        auto out = r.be->infer(ins);
        if (!out)
          return fail(
              std::move(out).error().add_context("while timing " + n.describe() + " on " + r.name));
        r.ms.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count());
      }
      if (round >= 4 && std::chrono::steady_clock::now() > t_end) break;
    }
    Choice c;
    c.node = n.name;
    std::string timing;
    const Run* base = nullptr;
    const Run* best = nullptr;
    for (const Run& r : runs) {
      c.accepted.push_back(r.name);
      timing += fmt::format("{}{} {:.3f} ms", timing.empty() ? "" : ", ", r.name, median(r.ms));
      if (r.name == "onednn") base = &r;
      if (best == nullptr || median(r.ms) < median(best->ms)) best = &r;
    }
    std::sort(c.accepted.begin(), c.accepted.end());
    c.winner = best->name;
    if (base != nullptr && best != base &&
        median(best->ms) > median(base->ms) * (1.0 - static_cast<double>(margin) / 100.0))
      c.winner = base->name;
    HONE_LOG_INFO("select: {}: {} -> {}", n.describe(), timing, c.winner);
    ++timed_nodes_;
    out.push_back(std::move(c));
  }
  return out;
}

Result<void> SelectBackend::do_build(const Graph& graph) {
  choices_.clear();
  ops_.clear();
  timed_nodes_ = 0;
  planned_.reset();
  if (config().get<bool>("optimize", true)) {
    if (shared_optimized() && shared_optimized()->made_from(graph)) {
      planned_ = shared_optimized();
    } else {
      HONE_TRY(planned_, optimize_shared(graph));
    }
  }
  const Graph& planned = planned_ ? *planned_->graph : graph;
  const std::string recorded = config().get<std::string>("kernel_choices", "");
  if (recorded.empty()) {
    HONE_TRY(choices_, choose(planned));
    std::string text;
    for (const Choice& c : choices_) {
      std::string acc;
      for (const std::string& a : c.accepted) acc += (acc.empty() ? "" : "+") + a;
      text += (text.empty() ? "" : ";") + c.node + "=" + c.winner + "(" + acc + ")";
    }
    HONE_CHECK_OK(mutable_config().set_from_string("kernel_choices", text.empty() ? "-" : text));
    HONE_LOG_INFO("select: recorded kernel_choices={}", text.empty() ? "-" : text);
  } else {
    HONE_TRY(choices_, parse_choices(recorded));
  }
  for (const Choice& c : choices_) {
    bool found = false;
    for (const Node& n : planned.nodes())
      if (n.name == c.node) {
        found = true;
        ops_[c.node] = n.describe();
      }
    if (!found)
      return fail(ErrorCode::kInvalidArgument, "kernel_choices names node '" + c.node +
                                                   "', which graph '" + graph.name() +
                                                   "' (as planned) does not have");
  }
  return CompilingBackend::do_build(graph);
}

std::vector<std::pair<std::string, std::string>> SelectBackend::choice_records() const {
  std::vector<std::shared_ptr<const Backend>> blocks;
  for (const RegistryCompiler* rc : {&onednn_, &blas_, &aot_})
    for (auto& b : rc->built()) blocks.push_back(std::move(b));
  auto out = CompilingBackend::choice_records();
  for (auto& [field, text] : out) {
    std::vector<std::string> theirs;
    for (const auto& b : blocks)
      for (auto& [f, t] : b->choice_records())
        if (f == field) theirs.push_back(std::move(t));
    if (theirs.empty()) continue;  // kernel_choices: select's own
    // Their syntax: the blocks' backends checked the entries when built.
    const ChoiceSyntax any{"select " + field, "choice", "any",
                           [](const std::string&) { return true; }};
    auto merged = parse_choice_text(text, any);
    if (!merged) continue;  // the build refused it already
    for (const std::string& t : theirs)
      if (auto entries = parse_choice_text(t, any))
        for (auto& [key, e] : *entries) merged->insert_or_assign(key, std::move(e));
    text = format_choice_text(*merged);
  }
  return out;
}

std::vector<std::string> SelectBackend::describe_kernels() const {
  std::vector<std::string> out;
  for (const Choice& c : choices_) {
    std::string acc;
    for (const std::string& a : c.accepted) acc += (acc.empty() ? "" : ", ") + a;
    auto it = ops_.find(c.node);
    out.push_back(fmt::format("{} -> {} (per-op selection among {})",
                              it != ops_.end() ? it->second : c.node, c.winner, acc));
  }
  size_t onednn = 0, fallback = 0;
  for (const Block& b : partition().blocks) {
    if (!b.on_backend && !b.control) ++fallback;
    if (b.on_backend && b.placed_on.empty()) ++onednn;
  }
  out.push_back(
      fmt::format("the rest -> onednn ({} blocks; {} on the fallback)", onednn, fallback));
  return out;
}

}  // namespace hone::select

namespace hone {

void register_select(BackendRegistry& registry) {
  auto r = registry.add(
      {"select",
       "per-op kernel selection: each Conv/MatMul/Gemm/LSTM/GRU timed on onednn, blas and aot, "
       "run by the winner (recorded in kernel_choices); the rest on onednn",
       select::SelectBackend::caps(), [] { return std::make_unique<select::SelectBackend>(); },
       /*unavailable_reason=*/{}, /*opt_in=*/true});
  (void)r;  // only fails on a duplicate name, which the one list rules out
}

}  // namespace hone
