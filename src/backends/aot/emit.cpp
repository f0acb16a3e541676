// emit_c(): the whole C source of one block: tables describing the I/O, one
// static function per step, run() walking them over one arena, and the C ABI
// (create, query, run, destroy, last error) that hone and the standalone
// runner call.
#include <cctype>
#include <cinttypes>
#include <cstdio>

#include "backends/aot/emitter.h"
#include "backends/aot/gemm_fold.h"
#include "backends/aot/lstm.h"
#include "backends/aot/nhwc.h"
#include "backends/aot/nms.h"
#include "backends/aot/runtime_text.h"
#include "backends/aot/typed_values.h"
#include "backends/aot/weights_blob.h"
#include "ops/attrs.h"

namespace hone::aot {
namespace {

std::string c_string(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\')
      out += std::string("\\") + ch;
    else if (static_cast<unsigned char>(ch) < 0x20 || static_cast<unsigned char>(ch) >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\%03o", static_cast<unsigned char>(ch));
      out += buf;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

std::string step_fn(size_t i, const Step& s) {
  std::string name = "step" + std::to_string(i) + "_";
  for (char ch : s.label)
    name +=
        std::isalnum(static_cast<unsigned char>(ch)) ? static_cast<char>(std::tolower(ch)) : '_';
  return name;
}

}  // namespace

std::string Emitter::ptr(ValueId v) const {
  while (p_.values[static_cast<size_t>(v)].place == Place::kView)
    v = p_.values[static_cast<size_t>(v)].view_of;
  const ValueInfo& i = p_.values[static_cast<size_t>(v)];
  const std::string t = c_type(i.dtype);
  switch (i.place) {
    case Place::kInput:
      return "((const " + t + "*)c->in[" + std::to_string(i.index) + "])";
    case Place::kOutput:
      return "((" + t + "*)c->out[" + std::to_string(i.index) + "])";
    case Place::kWeight:
      return i.is_f32() ? "(c->W + " + std::to_string(i.offset) + ")"
                        : "((const " + t + "*)(c->W + " + std::to_string(i.offset) + "))";
    case Place::kArena:
      return "((" + t + "*)(c->A + " + std::to_string(i.offset) + "))";
    default:
      return "NULL";
  }
}

std::string Emitter::ctype(ValueId v) const {
  while (p_.values[static_cast<size_t>(v)].place == Place::kView)
    v = p_.values[static_cast<size_t>(v)].view_of;
  return c_type(p_.values[static_cast<size_t>(v)].dtype);
}

std::vector<std::string> describe_steps(const Program& p) {
  std::vector<std::string> out;
  for (const Step& s : p.steps) {
    if (auto k = describe_nhwc(p, s)) {
      out.push_back(s.label + " [" + *k + "]");
      continue;
    }
    std::string kernel = "loop";
    if (s.anchor >= 0) {
      const std::string& op = p.node(s.anchor).op_type;
      if (op == "Conv")
        kernel = s.scratch_floats.is_const() && s.scratch_floats.value() == 0
                     ? (ops::conv_group(p.node(s.anchor)) > 1 ? "conv.f32.aot.depthwise_direct"
                                                              : "conv.f32.aot.pointwise_sgemm")
                     : "conv.f32.aot.im2col_sgemm";
      else if (op == "LSTM")
        kernel = "lstm.f32.aot.fused_cell";
      else if (op == "GRU")
        kernel = "gru.f32.aot.sgemm_cell";
      else if (op == "Gemm" || op == "MatMul")
        kernel = "gemm.f32.aot.dnnl_sgemm";
      else
        kernel = "loop.f32.aot." + op;
    }
    if (s.chain.size() > gemm_scale(p, s).absorbed)
      kernel += (s.anchor >= 0 ? "+" : "") + std::string("fused_eltwise");
    out.push_back(s.label + " [" + kernel + "]");
  }
  return out;
}

std::string emit_c(const Program& p, const EmitOptions& o) {
  Emitter e(p);
  const Graph& g = *p.graph;
  std::string& t = e.text();
  t += "/* " + comment(o.banner) + "\n";
  t += " * Graph '" + comment(g.name()) + "': " + std::to_string(g.nodes().size()) + " nodes in " +
       std::to_string(p.steps.size()) + " steps, arena " + std::to_string(p.arena_bytes) +
       " bytes, weights " + std::to_string(p.weights.size() * 4) + " bytes.\n";
  for (size_t i = 0; i < p.symbols.size(); ++i)
    t += " * d[" + std::to_string(i) + "] = '" + comment(p.symbols[i]) + "', at most " +
         std::to_string(p.symbol_max[i]) + "\n";
  const auto lines = describe_steps(p);
  for (size_t i = 0; i < lines.size(); ++i)
    t += " * step " + std::to_string(i) + ": " + comment(lines[i]) + "\n";
  t += " */\n";
  t += runtime_text::kHoneAotAbi;
  t += runtime_text::kCore;
  if (uses_dnnl_conv(p))
    t += "\n#define NUM_DN_SLOTS " + std::to_string(p.steps.size()) + "\n" +
         std::string(runtime_text::kDnnlConv);
  if (uses_lstm(p)) t += runtime_text::kLstm;
  if (uses_grid_sample(p)) t += runtime_text::kGridSampleTaps;
  if (uses_roi_align(p)) t += runtime_text::kRoiAlignPoints;
  if (uses_nms(p)) t += runtime_text::kNmsSelect;

  // --- I/O tables ---------------------------------------------------------
  const size_t nin = g.inputs().size(), nout = g.outputs().size();
  size_t max_rank = 1;
  for (ValueId v : g.inputs())
    max_rank = std::max(max_rank, p.values[static_cast<size_t>(v)].dims.size());
  for (ValueId v : g.outputs())
    max_rank = std::max(max_rank, p.values[static_cast<size_t>(v)].dims.size());
  t += "\n#define NUM_INPUTS " + std::to_string(nin) + "\n#define NUM_OUTPUTS " +
       std::to_string(nout) + "\n#define NUM_SYMBOLS " + std::to_string(p.symbols.size()) +
       "\n#define MAX_RANK " + std::to_string(max_rank) + "\n#define ARENA_BYTES " +
       std::to_string(p.arena_bytes) + "ULL\n#define WEIGHT_BYTES " +
       std::to_string(p.weights.size() * 4) + "ULL\n";
  char hash[40];
  std::snprintf(hash, sizeof hash, "0x%016" PRIx64 "ULL",
                fnv1a64(p.weights.data(), p.weights.size() * 4));
  t += std::string("#define WEIGHT_HASH ") + hash + "\n\n";
  auto names = [&](const char* table, const std::vector<ValueId>& vs) {
    t += std::string("static const char* const ") + table + "[] = {";
    for (ValueId v : vs) t += c_string(g.value(v).name) + ", ";
    t += "NULL};\n";
  };
  names("input_names", g.inputs());
  names("output_names", g.outputs());
  auto ranks = [&](const char* table, const std::vector<ValueId>& vs) {
    t += std::string("static const int ") + table + "[] = {";
    for (ValueId v : vs) t += std::to_string(p.values[static_cast<size_t>(v)].dims.size()) + ", ";
    t += "0};\n";
  };
  ranks("input_ranks", g.inputs());
  ranks("output_ranks", g.outputs());
  auto dtypes = [&](const char* table, const std::vector<ValueId>& vs) {
    t += std::string("static const char* const ") + table + "[] = {";
    for (ValueId v : vs)
      t += "\"" + std::string(dtype_name(p.values[static_cast<size_t>(v)].dtype)) + "\", ";
    t += "NULL};\n";
  };
  dtypes("input_dtypes", g.inputs());
  dtypes("output_dtypes", g.outputs());
  // Static dims as numbers, symbolic ones as -1 - (symbol index).
  t += "static const int64_t input_dims[NUM_INPUTS + 1][MAX_RANK] = {";
  for (ValueId v : g.inputs()) {
    t += "{";
    // By the graph's dims: one the code reads as an expression binds its symbol (edge_dims.h).
    const DimExprs& dims = p.values[static_cast<size_t>(v)].dims;
    for (size_t a = 0; a < dims.size(); ++a) {
      const DimExpr& d = dims[a];
      int64_t code = d.is_const() ? d.value() : -1;
      std::string name = d.to_string();
      if (const auto& shape = g.value(v).shape; shape && a < shape->rank() && !d.is_const())
        name = (*shape)[a].is_symbolic() ? (*shape)[a].symbol_name()
                                         : g.value(v).name + ":" + std::to_string(a);
      for (size_t s = 0; s < p.symbols.size() && !d.is_const(); ++s)
        if (p.symbols[s] == name) code = -1 - static_cast<int64_t>(s);
      t += std::to_string(code) + ", ";
    }
    t += "}, ";
  }
  t += "{0}};\n";
  t += "static const char* const symbol_names[] = {";
  for (const std::string& s : p.symbols) t += c_string(s) + ", ";
  t += "NULL};\nstatic const int64_t symbol_max[] = {";
  for (int64_t m : p.symbol_max) t += std::to_string(m) + ", ";
  // Every symbolic dim may be 0 at run time: zero-sized tensors are legal ONNX,
  // and a block's input after a NonZero, a TopK of a run-time K or a Slice
  // over them is often empty. The code runs no iteration of an empty loop,
  // divides dims by hone_dim_div and calls oneDNN on no empty operand.
  t += "0};\nstatic const int64_t symbol_min[] = {";
  for (size_t i = 0; i < p.symbols.size(); ++i) t += "0, ";
  t += "0};\nstatic const int symbol_set_by_run[] = {";
  for (size_t i = 0; i < p.symbols.size(); ++i)
    t += i < p.symbol_set_by_run.size() && p.symbol_set_by_run[i] ? "1, " : "0, ";
  t += "0};\n\n";

  // --- binding dims and output shapes ---------------------------------------
  t += R"C(static void output_dims(const int64_t* d, int k, int64_t* dims) {
  (void)d;
  switch (k) {
)C";
  for (size_t k = 0; k < nout; ++k) {
    t += "    case " + std::to_string(k) + ":";
    const DimExprs& dd = p.values[static_cast<size_t>(g.outputs()[k])].dims;
    for (size_t a = 0; a < dd.size(); ++a)
      t += " dims[" + std::to_string(a) + "] = " + p.c(dd[a]) + ";";
    t += " break;\n";
  }
  t += "    default: break;\n  }\n}\n\n";

  // --- steps ----------------------------------------------------------------
  for (size_t i = 0; i < p.steps.size(); ++i) {
    const Step& s = p.steps[i];
    std::string what;
    if (s.anchor >= 0) what += "'" + p.node(s.anchor).name + "'";
    for (NodeId m : s.chain) what += (what.empty() ? "'" : ", '") + p.node(m).name + "'";
    t += "/* " +
         comment(s.label + ": " + what + " -> " + p.values[static_cast<size_t>(s.result)].name +
                 " " + to_string(p.values[static_cast<size_t>(s.result)].dims)) +
         " */\n";
    // Each step stays a function of its own: inlined into hone_aot_run, a
    // large model made one function too big for GCC's inlining budget, so
    // helpers such as hone_erf were called, and their loops left scalar
    // (the transformer ran 1.4x slower).
    t += "__attribute__((noinline))\nstatic void " + step_fn(i, s) + "(const ctx_t* c) {\n";
    t += "  const int64_t* d = c->d;\n  (void)d;\n";
    Emitter body(p);
    body.open("");
    body.emit_step(s);
    body.close();
    // The block braces keep the step's names local; drop the outer pair's indent.
    t += body.text();
    t += "}\n\n";
  }

  // --- run: the steps in order, then the outputs they did not write in place
  t += "static void run_steps(const ctx_t* c) {\n  const int64_t* d = c->d;\n  (void)d;\n";
  // What the code assumes of its dims (Program::dim_checks).
  for (const Program::DimCheck& k : p.dim_checks) {
    const std::string dim = p.c(k.dim), value = p.c(k.value);
    std::string what;  // printf's format: '%' doubled
    for (char ch : k.what) what += ch == '%' ? std::string("%%") : std::string(1, ch);
    t += "  if (" + dim + (k.exact ? " != " : " < ") + value +
         ") {\n    *c->status = set_error(HONE_AOT_INVALID_ARGUMENT, " +
         c_string(what + (k.exact ? " is %lld, but the dims it is computed from make it %lld"
                                  : " is %lld, shorter than the %lld it needs")) +
         ", (long long)" + dim + ", (long long)" + value + ");\n    return;\n  }\n";
  }
  for (size_t i = 0; i < p.steps.size(); ++i)
    t += "  " + step_fn(i, p.steps[i]) + "(c);\n  if (*c->status) return;\n";
  // Outputs the steps did not write in place: inputs, weights, views, repeats.
  for (size_t k = 0; k < nout; ++k) {
    const ValueId v = g.outputs()[k];
    const ValueInfo& info = p.values[static_cast<size_t>(v)];
    if (info.place == Place::kOutput && info.index == static_cast<int64_t>(k)) continue;
    t += "  memcpy(c->out[" + std::to_string(k) + "], " + e.ptr(v) + ", sizeof(" + e.ctype(v) +
         ") * " + e.numel(v) + ");  /* " + comment(info.name) + " */\n";
  }
  t += "}\n\n";

  // --- the CPU check: compiled for this machine's CPU, it must run anywhere
  t += R"C(#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("arch=x86-64")))
#endif
static int check_cpu(void) {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
)C";
  for (const std::string& f : o.cpu_features)
    t += "  if (!__builtin_cpu_supports(" + c_string(f) +
         ")) return set_error(HONE_AOT_UNSUPPORTED_CPU, \"this CPU lacks '" + f +
         "', which this library was compiled for\");\n";
  t += "#endif\n  return 0;\n}\n\n";
  t += runtime_text::kModel;
  return t;
}

}  // namespace hone::aot
