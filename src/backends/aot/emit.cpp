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
#include "backends/aot/weights_blob.h"

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

/// Text safe inside a C comment.
std::string comment(std::string s) {
  for (size_t i = 0; (i = s.find("*/", i)) != std::string::npos;) s.replace(i, 2, "* /");
  return s;
}

std::string step_fn(size_t i, const Step& s) {
  std::string name = "step" + std::to_string(i) + "_";
  for (char ch : s.label)
    name +=
        std::isalnum(static_cast<unsigned char>(ch)) ? static_cast<char>(std::tolower(ch)) : '_';
  return name;
}

const char* kPrelude = R"C(#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <omp.h>

#define HONE_EXPORT __attribute__((visibility("default")))

/* oneDNN's row-major SGEMM (libdnnl.so.2), declared here so no oneDNN header is
 * needed. It threads with OpenMP (libgomp), the runtime of the loops below, so
 * one thread team serves both. */
int dnnl_sgemm(char transa, char transb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
               int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
#define SGEMM(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) \
  dnnl_sgemm((ta) ? 'T' : 'N', (tb) ? 'T' : 'N', (m), (n), (k), (alpha), (a), (lda), (b), (ldb), (beta), (c), (ldc))

/* glibc's vector math (libmvec): with these, loops that call them vectorize. */
float expf(float) __attribute__((simd("notinbranch")));
float logf(float) __attribute__((simd("notinbranch")));
float erff(float) __attribute__((simd("notinbranch")));
float tanhf(float) __attribute__((simd("notinbranch")));
float powf(float, float) __attribute__((simd("notinbranch")));

/* erf for Gelu: a degree-18 polynomial in u = |x|/2 - 1 over |x| <= 4 (erf(4)
 * is 1 in float), from Chebyshev interpolation; absolute error under 2e-7.
 * Inline, so a Gelu loop is FMAs only (libmvec's erff was 7% of a
 * transformer). NaN stays NaN; the Erf op itself keeps libm's erff. */
static inline __attribute__((always_inline)) float hone_erf(float x) {
  float a = fabsf(x);
  a = a > 4.0f ? 4.0f : a;
  const float u = 0.5f * a - 1.0f;
  /* Horner written out: a loop over a coefficient table stops GCC from
   * vectorizing the Gelu loop around it. */
  float p = 4.608522499e-03f;
  p = p * u - 5.780227974e-03f;
  p = p * u - 2.481124632e-02f;
  p = p * u + 4.325807609e-02f;
  p = p * u + 4.276042235e-02f;
  p = p * u - 1.396366690e-01f;
  p = p * u + 3.521664338e-02f;
  p = p * u + 2.147358212e-01f;
  p = p * u - 2.743972892e-01f;
  p = p * u - 2.608322236e-02f;
  p = p * u + 4.085031267e-01f;
  p = p * u - 4.324625850e-01f;
  p = p * u + 2.924482129e-02f;
  p = p * u + 4.188512705e-01f;
  p = p * u - 5.511112456e-01f;
  p = p * u + 3.857835519e-01f;
  p = p * u - 1.653360218e-01f;
  p = p * u + 4.133397467e-02f;
  p = p * u + 9.953222650e-01f;
  return copysignf(p, x);
}

typedef struct hone_model {
  const float* w;  /* the weights payload */
  void* owned;     /* the blob read by hone_aot_create, or NULL */
  int threads;     /* as given to create; 0: OpenMP's default */
  int nt;          /* OpenMP team size of every loop */
  char* arena;     /* used by one run at a time; others allocate their own */
  int arena_busy;
  void* dn;                /* oneDNN state of channels-last convs, or NULL */
  void (*free_dn)(void*);
} hone_model;

typedef struct {
  const float* W;
  const int64_t* d;
  char* A;
  const float* const* in;
  float* const* out;
  int nt;
  hone_model* m;
  int exclusive; /* this run holds the model's arena (and its cached oneDNN objects) */
  int* status;   /* a step that fails sets it, after set_error() */
} ctx_t;

static __thread char last_error[1024];

static void set_error(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_error, sizeof last_error, fmt, ap);
  va_end(ap);
}

HONE_EXPORT const char* hone_aot_last_error(void) { return last_error; }
HONE_EXPORT int hone_aot_abi_version(void) { return 1; }
)C";

}  // namespace

std::string Emitter::ptr(ValueId v) const {
  while (p_.values[static_cast<size_t>(v)].place == Place::kView)
    v = p_.values[static_cast<size_t>(v)].view_of;
  const ValueInfo& i = p_.values[static_cast<size_t>(v)];
  switch (i.place) {
    case Place::kInput:
      return "c->in[" + std::to_string(i.index) + "]";
    case Place::kOutput:
      return "c->out[" + std::to_string(i.index) + "]";
    case Place::kWeight:
      return "(c->W + " + std::to_string(i.offset) + ")";
    case Place::kArena:
      return "((float*)(c->A + " + std::to_string(i.offset) + "))";
    default:
      return "NULL";
  }
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
                     ? (p.node(s.anchor).attr_int("group", 1) > 1 ? "conv.f32.aot.depthwise_direct"
                                                                  : "conv.f32.aot.pointwise_sgemm")
                     : "conv.f32.aot.im2col_sgemm";
      else if (op == "LSTM")
        kernel = "lstm.f32.aot.fused_cell";
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
  t += kPrelude;
  if (uses_dnnl_conv(p)) t += dnnl_conv_runtime(p);
  t += lstm_prelude(p);

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
  // Static dims as numbers, symbolic ones as -1 - (symbol index).
  t += "static const int64_t input_dims[NUM_INPUTS + 1][MAX_RANK] = {";
  for (ValueId v : g.inputs()) {
    t += "{";
    for (const DimExpr& d : p.values[static_cast<size_t>(v)].dims) {
      int64_t code = d.is_const() ? d.value() : -1;
      for (size_t s = 0; s < p.symbols.size() && !d.is_const(); ++s)
        if (p.symbols[s] == d.to_string()) code = -1 - static_cast<int64_t>(s);
      t += std::to_string(code) + ", ";
    }
    t += "}, ";
  }
  t += "{0}};\n";
  t += "static const char* const symbol_names[] = {";
  for (const std::string& s : p.symbols) t += c_string(s) + ", ";
  t += "NULL};\nstatic const int64_t symbol_max[] = {";
  for (int64_t m : p.symbol_max) t += std::to_string(m) + ", ";
  t += "0};\n\n";

  // --- binding dims and output shapes ---------------------------------------
  t += R"C(/* Binds every symbolic dim from the input shapes and checks static dims and bounds. */
static int bind_dims(const int64_t* const* shapes, int64_t* d) {
  for (int s = 0; s < NUM_SYMBOLS; ++s) d[s] = -1;
  if (!shapes) { set_error("input shapes are NULL"); return -1; }
  for (int i = 0; i < NUM_INPUTS; ++i) {
    if (!shapes[i]) { set_error("input %d ('%s'): shape is NULL", i, input_names[i]); return -1; }
    for (int a = 0; a < input_ranks[i]; ++a) {
      const int64_t want = input_dims[i][a], got = shapes[i][a];
      if (want >= 0) {
        if (got != want) {
          set_error("input %d ('%s') axis %d is %lld, expected %lld", i, input_names[i], a, (long long)got, (long long)want);
          return -1;
        }
        continue;
      }
      const int s = (int)(-1 - want);
      if (got < 1 || got > symbol_max[s]) {
        set_error("input %d ('%s') axis %d ('%s') is %lld, outside the compiled bounds [1, %lld]", i, input_names[i], a,
                  symbol_names[s], (long long)got, (long long)symbol_max[s]);
        return -1;
      }
      if (d[s] >= 0 && d[s] != got) {
        set_error("input %d ('%s') axis %d ('%s') is %lld, but another input has '%s' = %lld", i, input_names[i], a,
                  symbol_names[s], (long long)got, symbol_names[s], (long long)d[s]);
        return -1;
      }
      d[s] = got;
    }
  }
  return 0;
}

static void output_dims(const int64_t* d, int k, int64_t* dims) {
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

  // --- run ------------------------------------------------------------------
  t +=
      R"C(HONE_EXPORT int hone_aot_run(void* handle, const float* const* in, const int64_t* const* in_shapes,
                             float* const* out) {
  hone_model* m = (hone_model*)handle;
  if (!m || !in || !out) { set_error("hone_aot_run: NULL model, inputs or outputs"); return -1; }
  int64_t d[NUM_SYMBOLS + 1];
  if (bind_dims(in_shapes, d) != 0) return -1;
  for (int i = 0; i < NUM_INPUTS; ++i)
    if (!in[i]) { set_error("input %d ('%s') is NULL", i, input_names[i]); return -1; }
  for (int k = 0; k < NUM_OUTPUTS; ++k)
    if (!out[k]) { set_error("output %d ('%s') is NULL", k, output_names[k]); return -1; }
  char* A = NULL;
  int own_arena = 0;
  if (ARENA_BYTES > 0) {
    if (__atomic_exchange_n(&m->arena_busy, 1, __ATOMIC_ACQUIRE) == 0) {
      A = m->arena;
    } else {
      A = (char*)aligned_alloc(64, (ARENA_BYTES + 63) / 64 * 64);
      if (!A) { set_error("out of memory for a %llu-byte arena", (unsigned long long)ARENA_BYTES); return -1; }
      own_arena = 1;
    }
  }
  omp_set_num_threads(m->nt);
  int status = 0;
  const ctx_t ctx = {m->w, d, A, in, out, m->nt, m, A != NULL && !own_arena, &status};
  const ctx_t* c = &ctx;
)C";
  for (size_t i = 0; i < p.steps.size(); ++i)
    t += "  " + step_fn(i, p.steps[i]) + "(c);\n  if (status) goto done;\n";
  // Outputs the steps did not write in place: inputs, weights, views, repeats.
  for (size_t k = 0; k < nout; ++k) {
    const ValueId v = g.outputs()[k];
    const ValueInfo& info = p.values[static_cast<size_t>(v)];
    if (info.place == Place::kOutput && info.index == static_cast<int64_t>(k)) continue;
    t += "  memcpy(c->out[" + std::to_string(k) + "], " + e.ptr(v) + ", sizeof(float) * " +
         e.numel(v) + ");  /* " + comment(info.name) + " */\n";
  }
  if (!p.steps.empty()) t += "done:\n";
  t += R"C(  if (own_arena) free(A);
  else if (A) __atomic_store_n(&m->arena_busy, 0, __ATOMIC_RELEASE);
  return status;
}

HONE_EXPORT int hone_aot_output_shape(const void* handle, const int64_t* const* in_shapes, int k, int64_t* dims) {
  int64_t d[NUM_SYMBOLS + 1];
  if (!handle || !dims || k < 0 || k >= NUM_OUTPUTS) { set_error("hone_aot_output_shape: bad arguments"); return -1; }
  if (bind_dims(in_shapes, d) != 0) return -1;
  output_dims(d, k, dims);
  return 0;
}

HONE_EXPORT int hone_aot_num_inputs(const void* h) { (void)h; return NUM_INPUTS; }
HONE_EXPORT int hone_aot_num_outputs(const void* h) { (void)h; return NUM_OUTPUTS; }
HONE_EXPORT const char* hone_aot_input_name(const void* h, int i) { (void)h; return i >= 0 && i < NUM_INPUTS ? input_names[i] : NULL; }
HONE_EXPORT const char* hone_aot_output_name(const void* h, int k) { (void)h; return k >= 0 && k < NUM_OUTPUTS ? output_names[k] : NULL; }
HONE_EXPORT int hone_aot_input_rank(const void* h, int i) { (void)h; return i >= 0 && i < NUM_INPUTS ? input_ranks[i] : -1; }
HONE_EXPORT int hone_aot_output_rank(const void* h, int k) { (void)h; return k >= 0 && k < NUM_OUTPUTS ? output_ranks[k] : -1; }
/* A static dim, or -1 for a symbolic one (see hone_aot_input_dim_symbol). */
HONE_EXPORT int64_t hone_aot_input_dim(const void* h, int i, int a) {
  (void)h;
  if (i < 0 || i >= NUM_INPUTS || a < 0 || a >= input_ranks[i]) return -1;
  return input_dims[i][a] >= 0 ? input_dims[i][a] : -1;
}
HONE_EXPORT const char* hone_aot_input_dim_symbol(const void* h, int i, int a) {
  (void)h;
  if (i < 0 || i >= NUM_INPUTS || a < 0 || a >= input_ranks[i] || input_dims[i][a] >= 0) return NULL;
  return symbol_names[-1 - input_dims[i][a]];
}

static uint64_t fnv1a64(const unsigned char* p, uint64_t n) {
  uint64_t h = 1469598103934665603ULL;
  for (uint64_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ULL;
  return h;
}

/* Compiled for this machine's CPU; this check itself must run anywhere. */
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("arch=x86-64")))
#endif
static int check_cpu(void) {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
)C";
  for (const std::string& f : o.cpu_features)
    t += "  if (!__builtin_cpu_supports(" + c_string(f) + ")) { set_error(\"this CPU lacks '" + f +
         "', which this library was compiled for\"); return -1; }\n";
  t += R"C(#endif
  return 0;
}

static hone_model* init(const unsigned char* blob, uint64_t bytes, void* owned, int threads) {
  if (check_cpu() != 0) { free(owned); return NULL; }
  if (bytes < 64 || memcmp(blob, "HONEAOTW", 8) != 0) {
    set_error("the weights file is not a hone aot weights blob (bad magic)");
    free(owned);
    return NULL;
  }
  uint64_t payload = 0, hash = 0;
  memcpy(&payload, blob + 16, 8);
  memcpy(&hash, blob + 24, 8);
  if (payload != WEIGHT_BYTES || bytes < 64 + payload) {
    set_error("the weights blob holds %llu bytes, this library needs %llu", (unsigned long long)payload,
              (unsigned long long)WEIGHT_BYTES);
    free(owned);
    return NULL;
  }
  if (hash != WEIGHT_HASH || fnv1a64(blob + 64, payload) != WEIGHT_HASH) {
    set_error("the weights blob does not match this library (checksum differs)");
    free(owned);
    return NULL;
  }
  hone_model* m = (hone_model*)calloc(1, sizeof(hone_model));
  if (!m) { set_error("out of memory"); free(owned); return NULL; }
  m->w = (const float*)(blob + 64);
  m->owned = owned;
  m->threads = threads > 0 ? threads : 0;
  m->nt = threads > 0 ? threads : omp_get_max_threads();
#ifdef HONE_USES_DNNL
  if (dn_init(m) != 0) { free(owned); free(m); return NULL; }
#endif
  if (ARENA_BYTES > 0) {
    m->arena = (char*)aligned_alloc(64, (ARENA_BYTES + 63) / 64 * 64);
    if (!m->arena) { set_error("out of memory for a %llu-byte arena", (unsigned long long)ARENA_BYTES); if (m->free_dn) m->free_dn(m->dn); free(owned); free(m); return NULL; }
  }
  return m;
}

/* The blob stays owned by the caller and must outlive the model. */
HONE_EXPORT void* hone_aot_create_from_memory(const void* blob, uint64_t bytes, int threads) {
  if (!blob) { set_error("hone_aot_create_from_memory: NULL blob"); return NULL; }
  return init((const unsigned char*)blob, bytes, NULL, threads);
}

HONE_EXPORT void* hone_aot_create(const char* weights_path, int threads) {
  if (!weights_path) { set_error("hone_aot_create: NULL weights path"); return NULL; }
  FILE* f = fopen(weights_path, "rb");
  if (!f) { set_error("cannot open weights '%s'", weights_path); return NULL; }
  fseek(f, 0, SEEK_END);
  const long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  if (size < 0) { fclose(f); set_error("cannot size weights '%s'", weights_path); return NULL; }
  unsigned char* buf = (unsigned char*)aligned_alloc(64, ((uint64_t)size + 64) / 64 * 64);
  if (!buf) { fclose(f); set_error("out of memory reading '%s'", weights_path); return NULL; }
  const size_t got = fread(buf, 1, (size_t)size, f);
  fclose(f);
  if (got != (size_t)size) { free(buf); set_error("short read of weights '%s'", weights_path); return NULL; }
  return init(buf, (uint64_t)size, buf, threads);
}

HONE_EXPORT void hone_aot_destroy(void* handle) {
  hone_model* m = (hone_model*)handle;
  if (!m) return;
  if (m->free_dn) m->free_dn(m->dn);
  free(m->arena);
  free(m->owned);
  free(m);
}
)C";
  return t;
}

}  // namespace hone::aot
