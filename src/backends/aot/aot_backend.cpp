#include "backends/aot/aot_backend.h"

#include <oneapi/dnnl/dnnl.h>

#include <nlohmann/json.hpp>

#include <sstream>

#include "backends/aot/block_meta.h"
#include "backends/aot/edge_dims.h"
#include "backends/aot/host_block.h"
#include "backends/aot/program.h"
#include "backends/aot/runtime_text.h"
#include "backends/aot/toolchain.h"
#include "backends/aot/weights_blob.h"
#include "backends/common/capabilities.h"
#include "core/log.h"
#include "hone/file_io.h"
#include "hone/limits.h"
#include "hone/registry.h"
#include "hone/sha256.h"
#include "hone/thread_pool.h"
#include "hone/version.h"
#include "passes/dim_bounds.h"

namespace hone::aot {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

std::string hash_of(const std::string& bytes) {
  return sha256_hex(bytes);
}
std::string hash_of(const std::vector<uint8_t>& bytes) {
  return sha256_hex(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

/// The ErrorCode of a hone_aot_status a generated library returned.
ErrorCode error_code(int status) {
  switch (status) {
    case HONE_AOT_OUT_OF_MEMORY:
      return ErrorCode::kOutOfMemory;
    case HONE_AOT_UNSUPPORTED_CPU:
      return ErrorCode::kUnsupportedHardware;
    case HONE_AOT_BAD_WEIGHTS:
      return ErrorCode::kCorrupt;
    case HONE_AOT_IO_ERROR:
      return ErrorCode::kIo;
    case HONE_AOT_KERNEL_FAILED:
      return ErrorCode::kInternal;
    default:
      return ErrorCode::kInvalidArgument;
  }
}

Result<LowerOptions> lower_options(const BackendConfig& c) {
  LowerOptions o;
  o.default_max = c.get<int64_t>("default_dim_max", 64);
  if (o.default_max < 1)
    return fail(ErrorCode::kInvalidArgument, "default_dim_max must be at least 1");
  std::stringstream ss(c.get<std::string>("dim_bounds", ""));
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    char* end = nullptr;
    const long long v = eq == std::string::npos ? 0 : std::strtoll(item.c_str() + eq + 1, &end, 10);
    if (eq == std::string::npos || eq == 0 || end == nullptr || *end != '\0' || v < 1)
      return fail(ErrorCode::kInvalidArgument,
                  "dim_bounds entry '" + item +
                      "' is not NAME=MAX with MAX >= 1 (e.g. 'batch=32,seq=128')");
    o.bounds[item.substr(0, eq)] = v;
  }
  return o;
}

std::vector<uint8_t> to_bytes(const std::string& s) {
  return {s.begin(), s.end()};
}

}  // namespace

/// One compiled block: its library, weights and the generated source.
class AotBlock final : public CompiledBlock {
 public:
  std::unique_ptr<Graph> graph;
  Program program;
  std::string source, log;
  bool cache_hit = false;
  std::vector<uint8_t> blob;
  std::shared_ptr<Library> lib;
  fs::path library_path;
  // The library's bytes, kept so save and export still work after the folder
  // it was loaded from is gone (a package is loaded from a temporary folder).
  std::string library_bytes;
  json toolchain;  // compiler, flags, cpu_features, libraries
  std::shared_ptr<std::atomic<uint64_t>> executions;
  void* handle = nullptr;

  ~AotBlock() override {
    if (handle != nullptr) lib->abi().destroy(handle);
  }

  Result<void> create(int threads) {
    handle = lib->abi().create_from_memory(blob.data(), blob.size(), threads);
    if (handle == nullptr) {
      const int status = lib->abi().last_status();
      return fail(status == HONE_AOT_UNSUPPORTED_CPU ? ErrorCode::kUnsupportedHardware
                  : status == HONE_AOT_OUT_OF_MEMORY ? ErrorCode::kOutOfMemory
                                                     : ErrorCode::kCorrupt,
                  std::string("the compiled block refused to start: ") + lib->abi().last_error());
    }
    return {};
  }

  Result<std::vector<Tensor>> run(const std::vector<Tensor>& inputs) const override {
    if (const std::string why = beyond_guessed_bound(inputs); !why.empty()) {
      HONE_LOG_DEBUG("aot: block '{}' runs on the reference for this call: {}", graph->name(), why);
      return eval::Interpreter().run_tensors(*graph, inputs);
    }
    const Abi& abi = lib->abi();
    static const int64_t kScalarShape[1] = {0};  // rank-0 tensors have no dims, but a pointer
    std::vector<const void*> in;
    std::vector<const int64_t*> shapes;
    const std::vector<ValueId>& ins = graph->inputs();
    for (size_t i = 0; i < inputs.size(); ++i) {
      const DType want =
          i < ins.size() ? program.values[static_cast<size_t>(ins[i])].dtype : DType::kF32;
      if (inputs[i].dtype() != want)
        return fail(ErrorCode::kInvalidArgument, "aot block input " + std::to_string(i) + " is " +
                                                     std::string(dtype_name(inputs[i].dtype())) +
                                                     ", expected " + std::string(dtype_name(want)));
      in.push_back(inputs[i].raw());
      shapes.push_back(inputs[i].rank() == 0 ? kScalarShape : inputs[i].shape().data());
    }
    std::vector<Tensor> outs;
    std::vector<void*> out_ptrs;
    const int n = abi.num_outputs(handle);
    for (int k = 0; k < n; ++k) {
      const int rank = std::max(abi.output_rank(handle, k), 0);
      std::vector<int64_t> dims(static_cast<size_t>(rank) + 1);
      if (const int status = abi.output_shape(handle, shapes.data(), k, dims.data()))
        return fail(error_code(status), abi.last_error());
      dims.resize(static_cast<size_t>(rank));
      const ValueId v = graph->outputs().at(static_cast<size_t>(k));
      HONE_TRY(Tensor t, Tensor::allocate(program.values[static_cast<size_t>(v)].dtype, dims));
      out_ptrs.push_back(t.raw());
      outs.push_back(std::move(t));
    }
    if (const int status = abi.run(handle, in.data(), shapes.data(), out_ptrs.data()))
      return fail(error_code(status), abi.last_error());
    HONE_CHECK_OK(take_ran_dims(abi, handle, outs));  // a length NonZero found (nonzero.cpp)
    executions->fetch_add(1, std::memory_order_relaxed);
    return outs;
  }

  /// Why this call's inputs exceed a bound the library was compiled with
  /// although nothing set it: a dim the graph leaves unknown at the block's
  /// edge (Program::symbol_unnamed, bounded by default_dim_max), such as
  /// the length after a Pad inside an If branch. Empty when none does. A
  /// named symbol's bound (dim_bounds, the tuned spec) stays an error.
  std::string beyond_guessed_bound(const std::vector<Tensor>& inputs) const {
    const std::vector<ValueId>& ins = graph->inputs();
    for (size_t i = 0; i < inputs.size() && i < ins.size(); ++i) {
      const ValueInfo& info = program.values[static_cast<size_t>(ins[i])];
      for (size_t a = 0; a < info.dims.size() && a < inputs[i].rank(); ++a) {
        if (info.dims[a].is_const()) continue;
        const std::string name = info.dims[a].to_string();
        for (size_t s = 0; s < program.symbols.size(); ++s)
          if (program.symbol_unnamed[s] && program.symbols[s] == name &&
              inputs[i].dim(a) > program.symbol_max[s])
            return "input '" + info.name + "' axis " + std::to_string(a) + " is " +
                   std::to_string(inputs[i].dim(a)) + ", past the " +
                   std::to_string(program.symbol_max[s]) +
                   " assumed for a dim the graph leaves unknown (default_dim_max)";
      }
    }
    return {};
  }

  /// Writes library, weights, source, log and block.json into `dir`.
  Result<void> write(const fs::path& dir, bool artifact) const {
    const std::string& so = library_bytes;
    HONE_CHECK_OK(write_file_atomic(dir / "model.so", to_bytes(so)));
    HONE_CHECK_OK(write_file_atomic(dir / "weights.bin", blob));
    HONE_CHECK_OK(write_file_atomic(dir / "model.c", source));
    HONE_CHECK_OK(write_file_atomic(dir / "compile.log", log));
    json j = toolchain;
    j["hone_version"] = kVersion;
    j["runtime"] = AotBackend::caps().libraries.at("aot-runtime");
    j["sha"] = {
        {"model.so", hash_of(so)}, {"weights.bin", hash_of(blob)}, {"model.c", hash_of(source)}};
    j["hash"] = "sha256";
    j["arena_bytes"] = program.arena_bytes;
    j["weights_bytes"] = program.weights.size() * 4;
    if (artifact) {
      // The ABI's header beside the library, for C callers of the artifact.
      HONE_CHECK_OK(
          write_file_atomic(dir / "hone_aot_abi.h", std::string(runtime_text::kHoneAotAbi)));
      j["format"] = "native-so";
      j["library"] = "model.so";
      j["weights"] = "weights.bin";
      j["source"] = "model.c";
      j["abi"] = {{"version", HONE_AOT_ABI_VERSION}, {"header", "hone_aot_abi.h"}};
#define HONE_AOT_ABI_JSON(name, ret, params) j["abi"][#name] = #ret " hone_aot_" #name #params;
      HONE_AOT_FUNCTIONS(HONE_AOT_ABI_JSON)
#undef HONE_AOT_ABI_JSON
      std::map<std::string, int64_t> max;
      for (size_t s = 0; s < program.symbols.size(); ++s)
        max[program.symbols[s]] = program.symbol_max[s];
      auto tensors = [&](const std::vector<ValueId>& vs) {
        json arr = json::array();
        for (ValueId v : vs) {
          const ValueInfo& info = program.values[static_cast<size_t>(v)];
          json shape = json::array(), bounds = json::object();
          json batch_axis = nullptr;
          for (size_t a = 0; a < info.dims.size(); ++a) {
            const DimExpr& d = info.dims[a];
            if (d.is_const()) {
              shape.push_back(d.value());
              continue;
            }
            shape.push_back(d.to_string());
            if (max.count(d.to_string())) bounds[d.to_string()] = {1, max[d.to_string()]};
            if (batch_axis.is_null() && (d.to_string() == "batch" || a == 0)) batch_axis = a;
          }
          arr.push_back({{"name", info.name},
                         {"dtype", std::string(dtype_name(info.dtype))},
                         {"shape", shape},
                         {"bounds", bounds},
                         {"batch_axis", batch_axis}});
        }
        return arr;
      };
      j["inputs"] = tensors(graph->inputs());
      j["outputs"] = tensors(graph->outputs());
    }
    HONE_CHECK_OK(
        write_file_atomic(dir / (artifact ? "model.json" : "block.json"), j.dump(2) + "\n"));
    return {};
  }
};

/// A block aot proposed but could not lower (a shape it cannot express, an
/// input of unknown rank): it runs on the reference, and export refuses it.
class ReferenceBlock final : public CompiledBlock {
 public:
  ReferenceBlock(Graph g, std::string why) : graph_(std::move(g)), why_(std::move(why)) {}
  const std::string& why() const { return why_; }
  Result<std::vector<Tensor>> run(const std::vector<Tensor>& inputs) const override {
    return eval::Interpreter().run_tensors(graph_, inputs);
  }

 private:
  Graph graph_;
  std::string why_;
};

AotBackend::AotBackend() : run_time_values_(std::make_shared<RunTimeValues>()) {
  // The artifact is one library for the whole graph, so even a lone
  // supported node is worth compiling rather than handing to the reference.
  mutable_config()
      .declare("min_block_size", int64_t{1}, "supported islands with fewer nodes fall back")
      .declare("dim_bounds", std::string{},
               "largest value per symbolic dim, e.g. 'batch=32,seq=128'")
      .declare("default_dim_max", int64_t{64}, "bound of a symbolic dim dim_bounds does not name")
      .declare("march_native", true, "compile for this CPU (its features are checked at load)");
}

const BackendCapabilities& AotBackend::caps() {
  static const BackendCapabilities c = [] {
    BackendCapabilities k = f32_capabilities(Device::kCpu, BuildMode::kAheadOfTime);
    k.has_artifact = true;
    k.artifact_format = "native-so";
    // The generated code calls oneDNN (SGEMM, convolutions).
    const dnnl_version_t* v = dnnl_version();
    k.libraries = {{"onednn", std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
                                  std::to_string(v->patch)}};
    // The C runtime every library carries, by ABI version and content: the
    // fingerprint (and so the tuning cache) then never reuses figures
    // measured with another runtime. (The compile cache is keyed by the
    // whole source already.)
    std::string runtime;
    for (std::string_view piece :
         {runtime_text::kHoneAotAbi, runtime_text::kCore, runtime_text::kDnnlConv,
          runtime_text::kLstm, runtime_text::kModel, runtime_text::kGridSampleTaps,
          runtime_text::kRoiAlignPoints})
      runtime += piece;
    k.libraries["aot-runtime"] =
        "abi" + std::to_string(HONE_AOT_ABI_VERSION) + "-" + sha256_hex(runtime).substr(0, 12);
    return k;
  }();
  return c;
}

NodeSupport AotBackend::supports(const Graph& g, const Node& node) const {
  run_time_values_->add(g);
  return supports_node(g, node);
}

Result<std::unique_ptr<CompiledBlock>> AotBackend::compile(const Graph& block) {
  // Host nodes (host_block.h): the rest of the block is compiled, reading
  // the values they make as inputs evaluated per signature.
  auto cut = cut_host_nodes(block, run_time_values_->names());
  auto refer = [&](std::string why) -> Result<std::unique_ptr<CompiledBlock>> {
    HONE_LOG_DEBUG("aot: block '{}' runs on the reference: {}", block.name(), why);
    HONE_CHECK_OK_CTX(eval::Interpreter().check_supported(block),
                      "while preparing a block aot cannot lower");
    fallbacks_.push_back(why);
    return std::make_unique<ReferenceBlock>(block, std::move(why));
  };
  if (!cut && cut.error().code() == ErrorCode::kUnsupported) return refer(cut.error().to_string());
  if (!cut) return fail(std::move(cut).error());
  if (!*cut) return compile_lowered(block);
  ++host_blocks_;
  if ((*cut)->graph.nodes().empty())
    return make_host_block(block, std::move(**cut), nullptr, nullptr);
  HONE_TRY(std::unique_ptr<CompiledBlock> inner, compile_lowered((*cut)->graph));
  if (auto* ref = dynamic_cast<ReferenceBlock*>(inner.get()))  // logged and counted already
    return std::unique_ptr<CompiledBlock>(std::make_unique<ReferenceBlock>(block, ref->why()));
  const Program* program = &static_cast<AotBlock*>(inner.get())->program;
  auto host = make_host_block(block, std::move(**cut), std::move(inner), program);
  if (!host && host.error().code() == ErrorCode::kUnsupported) {
    blocks_.pop_back();  // its library is not used
    return refer(host.error().to_string());
  }
  return host;
}

Result<std::unique_ptr<CompiledBlock>> AotBackend::compile_lowered(const Graph& block) {
  HONE_TRY(LowerOptions lo, lower_options(config()));
  for (const auto& [name, bound] : derived_bounds_) lo.bounds.try_emplace(name, bound);
  auto b = std::make_unique<AotBlock>();
  b->graph = std::make_unique<Graph>(block);
  // A block reading a value whose dim has no bound (configured, derived from the inputs', or
  // of a derived dim's symbols) cannot size its arena: it runs on the reference instead.
  std::string unbounded;
  for (ValueId v : block.inputs())
    for (const Dim& d : block.value(v).shape ? block.value(v).shape->dims() : std::vector<Dim>{}) {
      if (!d.is_symbolic() || lo.bounds.contains(d.symbol_name()) || !unbounded.empty()) continue;
      if (auto bound = derived_dim_bound(d, lo.bounds))  // "(((seq-1)/2)+1)"
        lo.bounds[d.symbol_name()] = *bound;
      else
        unbounded = "input '" + block.value(v).name + "' has dim '" + d.symbol_name() +
                    "', whose bound does not follow from the model inputs' bounds";
    }
  auto lowered = unbounded.empty() ? lower(*b->graph, lo)
                                   : Result<Program>(fail(ErrorCode::kUnsupported, unbounded));
  if (!lowered && lowered.error().code() == ErrorCode::kUnsupported) {
    // Decided from the graph and config alone, so load() reaches the same verdict.
    std::string why = lowered.error().to_string();
    for (char& ch : why)
      if (ch == '\n') ch = ';';
    HONE_LOG_DEBUG("aot: block '{}' runs on the reference: {}", block.name(), why);
    HONE_CHECK_OK_CTX(eval::Interpreter().check_supported(block),
                      "while preparing a block aot cannot lower");
    fallbacks_.push_back(why);
    return std::make_unique<ReferenceBlock>(block, std::move(why));
  }
  if (!lowered) return fail(std::move(lowered).error());
  b->program = std::move(*lowered);
  // The generated library allocates its arena and holds the weights: both
  // count against the budget before anything is compiled or loaded.
  HONE_CHECK_OK(check_allocation(
      static_cast<uint64_t>(b->program.arena_bytes) + b->program.weights.size() * 4,
      "the arena and weights of aot block '" + block.name() + "'"));
  b->blob = make_weights_blob(b->program.weights);
  b->executions = std::shared_ptr<std::atomic<uint64_t>>(shared_, &shared_->executions);
  const std::string banner =
      "Generated by hone " + std::string(kVersion) + " (aot backend); do not edit.";
  // 0 means hone's global pool size (--threads), so the OpenMP loops and
  // oneDNN (OpenMP-threaded too) use that many threads rather than every core of a shared machine.
  int threads = static_cast<int>(config().get<int64_t>("threads", 0));
  if (threads <= 0) threads = ThreadPool::global().num_threads();
  if (!load_dir_.empty()) {
    // Loading: the same graph and config must give the same source; then the
    // saved library is checked and opened, and no compiler runs.
    const fs::path dir = load_dir_ / ("block_" + std::to_string(blocks_.size()));
    HONE_TRY(std::string meta_text, read_file(dir / "block.json"));
    HONE_TRY(BlockMeta meta, parse_block_meta(meta_text, dir / "block.json"));
    b->toolchain = meta.toolchain;
    b->source = emit_c(b->program, {meta.cpu_features, banner});
    if (hash_of(b->source) != meta.sha_source) {
      // A runtime named and different says why; otherwise the graph, the
      // config or (before runtimes were named) the hone build changed.
      const std::string& ours = caps().libraries.at("aot-runtime");
      if (!meta.runtime.empty() && meta.runtime != ours)
        return fail(ErrorCode::kCorrupt,
                    "the library saved in '" + dir.string() + "' was generated with aot runtime " +
                        meta.runtime + ", and this hone has " + ours +
                        " (source hash differs): tune the model again with this hone");
      return fail(
          ErrorCode::kCorrupt,
          "the library saved in '" + dir.string() +
              "' was generated for another graph or config, or by another hone build "
              "(source hash differs)" +
              (meta.runtime.empty() ? ": if an older hone made it, tune the model again" : ""));
    }
    HONE_TRY(std::string w, read_file(dir / "weights.bin"));
    if (w.size() != b->blob.size() || std::memcmp(w.data(), b->blob.data(), w.size()) != 0)
      return fail(ErrorCode::kCorrupt,
                  "'" + (dir / "weights.bin").string() + "' does not hold this graph's weights");
    auto log = read_file(dir / "compile.log");
    b->log = log ? *log : "";
    b->library_path = dir / "model.so";
    std::error_code ec;
    if (fs::exists(b->library_path, ec)) {
      HONE_TRY(std::string so, read_file(b->library_path));
      if (hash_of(so) != meta.sha_library)
        return fail(ErrorCode::kCorrupt, "'" + b->library_path.string() +
                                             "' is corrupt (checksum differs from block.json)");
      b->cache_hit = true;
      b->library_bytes = std::move(so);
      HONE_TRY(b->lib, Library::open(b->library_path));
    } else {
      // The package's library was withheld (an unsigned package: its native
      // code is not trusted), so the source, regenerated from the graph and
      // equal to the saved model.c by hash, is compiled here instead.
      HONE_TRY(Toolchain tc, find_toolchain(config().get<bool>("march_native", true)));
      HONE_TRY(CompileResult cr, compile_cached(tc, b->source));
      HONE_LOG_INFO("aot: block '{}' rebuilt from its C source ({})", block.name(),
                    cr.cache_hit ? "compile cache hit" : "compiled");
      b->cache_hit = cr.cache_hit;
      b->library_path = cr.library;
      HONE_TRY(b->library_bytes, read_file(cr.library));
      HONE_TRY(b->lib, Library::open(cr.library));
    }
  } else {
    HONE_TRY(Toolchain tc, find_toolchain(config().get<bool>("march_native", true)));
    b->toolchain = {{"compiler", tc.cxx + " (" + tc.version + ")"},
                    {"compiler_flags", tc.flags},
                    {"cpu_features", tc.cpu_features},
                    {"libraries", tc.libraries}};
    b->source = emit_c(b->program, {tc.cpu_features, banner});
    HONE_TRY(CompileResult cr, compile_cached(tc, b->source));
    HONE_LOG_DEBUG("aot: block '{}': {} steps, arena {} bytes, library {} ({})", block.name(),
                   b->program.steps.size(), b->program.arena_bytes, cr.library.string(),
                   cr.cache_hit ? "cache hit" : "compiled");
    b->log = cr.log;
    b->cache_hit = cr.cache_hit;
    b->library_path = cr.library;
    HONE_TRY(b->library_bytes, read_file(cr.library));
    HONE_TRY(b->lib, Library::open(cr.library));
  }
  HONE_CHECK_OK(b->create(threads));
  blocks_.push_back(b.get());
  return b;
}

Result<void> AotBackend::do_build(const Graph& graph) {
  blocks_.clear();
  host_blocks_ = 0;
  fallbacks_.clear();
  node_names_.clear();
  for (const Node& n : graph.nodes()) node_names_.push_back(n.describe());
  // Blocks start at values inside the graph, whose dims the importer may have
  // named ("unk__116"); their bounds follow from the inputs' bounds.
  HONE_TRY(LowerOptions lo, lower_options(config()));
  std::map<std::string, int64_t> input_bounds;
  for (ValueId v : graph.inputs())
    if (const auto& shape = graph.value(v).shape)
      for (const Dim& d : shape->dims())
        if (d.is_symbolic()) {
          auto it = lo.bounds.find(d.symbol_name());
          input_bounds[d.symbol_name()] = it != lo.bounds.end() ? it->second : lo.default_max;
        }
  derived_bounds_ = passes::derive_dim_bounds(graph, input_bounds);
  run_time_values_->reset(graph);
  for (const auto& [name, bound] : derived_bounds_)
    if (!input_bounds.contains(name))
      HONE_LOG_DEBUG("aot: dim '{}' is at most {} (derived from the input bounds)", name, bound);
  return CompilingBackend::do_build(graph);
}

void AotBackend::prepare_body(const Graph& body) {
  // A body's inputs carry the dims of the values it reads outside; with the
  // bounds known so far, derive those of the dims made inside it.
  std::map<std::string, int64_t> known = derived_bounds_;
  if (auto lo = lower_options(config()))
    for (const auto& [name, bound] : lo->bounds) known.try_emplace(name, bound);
  std::map<std::string, int64_t> input_bounds;
  for (ValueId v : body.inputs())
    if (const auto& shape = body.value(v).shape)
      for (const Dim& d : shape->dims())
        if (d.is_symbolic())
          if (auto it = known.find(d.symbol_name()); it != known.end())
            input_bounds[d.symbol_name()] = it->second;
  for (const auto& [name, bound] : passes::derive_dim_bounds(body, input_bounds))
    derived_bounds_.try_emplace(name, bound);
}

Result<void> AotBackend::do_save(const fs::path& dir) const {
  json index = {{"format", "hone-aot-save"}, {"version", 1}, {"blocks", blocks_.size()}};
  for (size_t i = 0; i < blocks_.size(); ++i) {
    const fs::path sub = dir / ("block_" + std::to_string(i));
    std::error_code ec;
    fs::create_directory(sub, ec);
    if (ec) return fail(ErrorCode::kIo, "cannot create '" + sub.string() + "': " + ec.message());
    HONE_CHECK_OK(blocks_[i]->write(sub, false));
  }
  return write_file_atomic(dir / "aot.json", index.dump(2) + "\n");
}

Result<void> AotBackend::do_load(const Graph& graph, const fs::path& dir) {
  HONE_TRY(std::string text, read_file(dir / "aot.json"));
  json index = json::parse(text, nullptr, false);
  if (index.is_discarded() || index.value("format", "") != "hone-aot-save")
    return fail(ErrorCode::kCorrupt,
                "'" + (dir / "aot.json").string() + "' is not an aot save index");
  load_dir_ = dir;
  auto r = do_build(graph);
  load_dir_.clear();
  if (!r) return r;
  if (blocks_.size() != index.value("blocks", size_t{0}))
    return fail(ErrorCode::kCorrupt,
                "'" + dir.string() + "' holds " + std::to_string(index.value("blocks", 0)) +
                    " blocks; this graph and config make " + std::to_string(blocks_.size()));
  return {};
}

std::vector<std::string> AotBackend::describe_kernels() const {
  std::vector<std::string> out;
  for (const AotBlock* b : blocks_)
    for (std::string& s : describe_steps(b->program)) out.push_back(std::move(s));
  return out;
}

std::vector<std::string> AotBackend::compile_logs() const {
  std::vector<std::string> out;
  for (const AotBlock* b : blocks_) out.push_back(b->log);
  return out;
}

std::vector<bool> AotBackend::cache_hits() const {
  std::vector<bool> out;
  for (const AotBlock* b : blocks_) out.push_back(b->cache_hit);
  return out;
}

std::vector<std::string> AotBackend::sources() const {
  std::vector<std::string> out;
  for (const AotBlock* b : blocks_) out.push_back(b->source);
  return out;
}

Result<void> AotBackend::export_artifact(const fs::path& dir) const {
  if (state() != BackendState::kActive && state() != BackendState::kInactive &&
      state() != BackendState::kLoaded)
    return fail(ErrorCode::kFailedPrecondition,
                "aot: only a built backend can export its artifact");
  const Partition& p = partition();
  if (host_blocks_ > 0)
    return fail(ErrorCode::kUnsupported,
                "aot cannot export a native-so artifact: " + std::to_string(host_blocks_) +
                    " of its blocks read values computed from the input shapes (masks, positions, "
                    "shape arithmetic), which hone evaluates for each signature when the block "
                    "runs; the artifact must run without hone");
  if (!p.fallbacks.empty() || p.blocks.size() != 1 || !p.blocks[0].on_backend ||
      blocks_.size() != 1) {
    std::string why;
    for (const auto& [node, reason] : p.fallbacks) {
      const auto i = static_cast<size_t>(node);
      why += "\n  " + (i < node_names_.size() ? node_names_[i] : "node " + std::to_string(node)) +
             ": " + reason;
    }
    for (const std::string& f : fallbacks_) why += "\n  a block aot could not lower: " + f;
    return fail(
        ErrorCode::kUnsupported,
        "aot cannot export a native-so artifact: it must run the whole graph without hone, but " +
            std::to_string(p.fallbacks.size()) + " nodes and " + std::to_string(fallbacks_.size()) +
            " blocks fall back to the reference:" + why);
  }
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return fail(ErrorCode::kNotFound, "'" + dir.string() + "' is not a folder");
  HONE_CHECK_OK_CTX(blocks_[0]->write(dir, true),
                    "while exporting the aot artifact to '" + dir.string() + "'");
  return {};
}

}  // namespace hone::aot

namespace hone {

void register_aot(BackendRegistry& registry) {
  auto r =
      registry.add({"aot",
                    "generated C (fused loops, oneDNN GEMM and convs, one arena) compiled with the "
                    "system compiler; exports a native-so artifact",
                    aot::AotBackend::caps(), [] { return std::make_unique<aot::AotBackend>(); },
                    // Without a compiler it cannot build anything: it sits out tuning.
                    [] {
                      auto tc = aot::find_toolchain(false);
                      return tc ? std::string() : tc.error().message();
                    }});
  (void)r;  // only fails on a duplicate name, which the one list rules out
}

}  // namespace hone
