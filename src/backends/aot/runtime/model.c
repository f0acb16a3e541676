/* The ABI's entry points, the end of every generated library. Included into
 * the generated source as text (see runtime/README.md), after what emit_c()
 * writes for one model:
 *   NUM_INPUTS, NUM_OUTPUTS, NUM_SYMBOLS, MAX_RANK, ARENA_BYTES, WEIGHT_BYTES,
 *   WEIGHT_HASH; input_names, output_names, input_ranks, output_ranks,
 *   input_dtypes, output_dtypes ("f32", "i64", "i32", "bool"),
 *   input_dims (static dims, or -1 - symbol index), symbol_names, symbol_max,
 *   symbol_min (0: any symbolic dim may be empty at run time), symbol_set_by_run
 *   (1 for a length a step of this library finds: its largest until it has run);
 *   output_dims(d, k, dims), run_steps(c) and check_cpu().
 * With HONE_USES_DNNL, dnnl_conv.c's dn_init() too. */

/* The symbols of the last successful hone_aot_run on this thread (ran_output_shape). */
static __thread int64_t ran_dims[NUM_SYMBOLS + 1];
static __thread int ran_once;

/* Binds every symbolic dim from the input shapes and checks static dims and bounds. */
static int bind_dims(const int64_t* const* shapes, int64_t* d) {
  for (int s = 0; s < NUM_SYMBOLS; ++s) d[s] = symbol_set_by_run[s] ? symbol_max[s] : -1;
  if (!shapes) return set_error(HONE_AOT_INVALID_ARGUMENT, "input shapes are NULL");
  for (int i = 0; i < NUM_INPUTS; ++i) {
    if (!shapes[i])
      return set_error(HONE_AOT_INVALID_ARGUMENT, "input %d ('%s'): shape is NULL", i,
                       input_names[i]);
    for (int a = 0; a < input_ranks[i]; ++a) {
      const int64_t want = input_dims[i][a], got = shapes[i][a];
      if (want >= 0) {
        if (got != want)
          return set_error(HONE_AOT_INVALID_ARGUMENT,
                           "input %d ('%s') axis %d is %lld, expected %lld", i, input_names[i], a,
                           (long long)got, (long long)want);
        continue;
      }
      const int s = (int)(-1 - want);
      if (got < symbol_min[s] || got > symbol_max[s])
        return set_error(
            HONE_AOT_INVALID_ARGUMENT,
            "input %d ('%s') axis %d ('%s') is %lld, outside the compiled bounds [%lld, %lld]", i,
            input_names[i], a, symbol_names[s], (long long)got, (long long)symbol_min[s],
            (long long)symbol_max[s]);
      if (d[s] >= 0 && d[s] != got)
        return set_error(
            HONE_AOT_INVALID_ARGUMENT,
            "input %d ('%s') axis %d ('%s') is %lld, but another input has '%s' = %lld", i,
            input_names[i], a, symbol_names[s], (long long)got, symbol_names[s], (long long)d[s]);
      d[s] = got;
    }
  }
  return HONE_AOT_OK;
}

HONE_EXPORT int hone_aot_run(void* model, const void* const* in, const int64_t* const* in_shapes,
                             void* const* out) {
  hone_model* m = (hone_model*)model;
  if (!m || !in || !out)
    return set_error(HONE_AOT_INVALID_ARGUMENT, "hone_aot_run: NULL model, inputs or outputs");
  int64_t d[NUM_SYMBOLS + 1];
  int status = bind_dims(in_shapes, d);
  if (status != HONE_AOT_OK) return status;
  for (int i = 0; i < NUM_INPUTS; ++i)
    if (!in[i])
      return set_error(HONE_AOT_INVALID_ARGUMENT, "input %d ('%s') is NULL", i, input_names[i]);
  for (int k = 0; k < NUM_OUTPUTS; ++k)
    if (!out[k])
      return set_error(HONE_AOT_INVALID_ARGUMENT, "output %d ('%s') is NULL", k, output_names[k]);
  char* A = NULL;
  int own_arena = 0;
  if (ARENA_BYTES > 0) {
    if (__atomic_exchange_n(&m->arena_busy, 1, __ATOMIC_ACQUIRE) == 0) {
      A = m->arena;
    } else {
      A = (char*)aligned_alloc(64, (ARENA_BYTES + 63) / 64 * 64);
      if (!A)
        return set_error(HONE_AOT_OUT_OF_MEMORY, "out of memory for a %llu-byte arena",
                         (unsigned long long)ARENA_BYTES);
      own_arena = 1;
    }
  }
  omp_set_num_threads(m->nt);
  const ctx_t ctx = {m->w, d, A, in, out, m->nt, m, A != NULL && !own_arena, &status, d};
  run_steps(&ctx);
  if (status == HONE_AOT_OK) {
    memcpy(ran_dims, d, sizeof ran_dims);
    ran_once = 1;
  }
  if (own_arena)
    free(A);
  else if (A)
    __atomic_store_n(&m->arena_busy, 0, __ATOMIC_RELEASE);
  return status;
}

HONE_EXPORT int hone_aot_output_shape(const void* model, const int64_t* const* in_shapes, int k,
                                      int64_t* dims) {
  int64_t d[NUM_SYMBOLS + 1];
  if (!model || !dims || k < 0 || k >= NUM_OUTPUTS)
    return set_error(HONE_AOT_INVALID_ARGUMENT, "hone_aot_output_shape: bad arguments");
  const int status = bind_dims(in_shapes, d);
  if (status != HONE_AOT_OK) return status;
  output_dims(d, k, dims);
  return HONE_AOT_OK;
}

/* Output k's dims as the last successful hone_aot_run on this thread made them. */
HONE_EXPORT int hone_aot_ran_output_shape(const void* model, int k, int64_t* dims) {
  if (!model || !dims || k < 0 || k >= NUM_OUTPUTS)
    return set_error(HONE_AOT_INVALID_ARGUMENT, "hone_aot_ran_output_shape: bad arguments");
  if (!ran_once)
    return set_error(HONE_AOT_INVALID_ARGUMENT,
                     "hone_aot_ran_output_shape: no run has succeeded on this thread");
  output_dims(ran_dims, k, dims);
  return HONE_AOT_OK;
}

HONE_EXPORT int hone_aot_num_inputs(const void* model) {
  (void)model;
  return NUM_INPUTS;
}
HONE_EXPORT int hone_aot_num_outputs(const void* model) {
  (void)model;
  return NUM_OUTPUTS;
}
HONE_EXPORT const char* hone_aot_input_name(const void* model, int i) {
  (void)model;
  return i >= 0 && i < NUM_INPUTS ? input_names[i] : NULL;
}
HONE_EXPORT const char* hone_aot_output_name(const void* model, int k) {
  (void)model;
  return k >= 0 && k < NUM_OUTPUTS ? output_names[k] : NULL;
}
HONE_EXPORT int hone_aot_input_rank(const void* model, int i) {
  (void)model;
  return i >= 0 && i < NUM_INPUTS ? input_ranks[i] : -1;
}
HONE_EXPORT int hone_aot_output_rank(const void* model, int k) {
  (void)model;
  return k >= 0 && k < NUM_OUTPUTS ? output_ranks[k] : -1;
}
HONE_EXPORT const char* hone_aot_input_dtype(const void* model, int i) {
  (void)model;
  return i >= 0 && i < NUM_INPUTS ? input_dtypes[i] : NULL;
}
HONE_EXPORT const char* hone_aot_output_dtype(const void* model, int k) {
  (void)model;
  return k >= 0 && k < NUM_OUTPUTS ? output_dtypes[k] : NULL;
}
/* A static dim, or -1 for a symbolic one (see hone_aot_input_dim_symbol). */
HONE_EXPORT int64_t hone_aot_input_dim(const void* model, int i, int axis) {
  (void)model;
  if (i < 0 || i >= NUM_INPUTS || axis < 0 || axis >= input_ranks[i]) return -1;
  return input_dims[i][axis] >= 0 ? input_dims[i][axis] : -1;
}
HONE_EXPORT const char* hone_aot_input_dim_symbol(const void* model, int i, int axis) {
  (void)model;
  if (i < 0 || i >= NUM_INPUTS || axis < 0 || axis >= input_ranks[i] || input_dims[i][axis] >= 0)
    return NULL;
  return symbol_names[-1 - input_dims[i][axis]];
}

static uint64_t fnv1a64(const unsigned char* p, uint64_t n) {
  uint64_t h = 1469598103934665603ULL;
  for (uint64_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ULL;
  return h;
}

/* Takes `owned` (freed on failure). */
static hone_model* init(const unsigned char* blob, uint64_t bytes, void* owned, int threads) {
  if (check_cpu() != 0) {
    free(owned);
    return NULL;
  }
  if (bytes < 64 || memcmp(blob, "HONEAOTW", 8) != 0) {
    set_error(HONE_AOT_BAD_WEIGHTS, "the weights file is not a hone aot weights blob (bad magic)");
    free(owned);
    return NULL;
  }
  uint64_t payload = 0, hash = 0;
  memcpy(&payload, blob + 16, 8);
  memcpy(&hash, blob + 24, 8);
  if (payload != WEIGHT_BYTES || bytes < 64 + payload) {
    set_error(HONE_AOT_BAD_WEIGHTS, "the weights blob holds %llu bytes, this library needs %llu",
              (unsigned long long)payload, (unsigned long long)WEIGHT_BYTES);
    free(owned);
    return NULL;
  }
  if (hash != WEIGHT_HASH || fnv1a64(blob + 64, payload) != WEIGHT_HASH) {
    set_error(HONE_AOT_BAD_WEIGHTS,
              "the weights blob does not match this library (checksum differs)");
    free(owned);
    return NULL;
  }
  hone_model* m = (hone_model*)calloc(1, sizeof(hone_model));
  if (!m) {
    set_error(HONE_AOT_OUT_OF_MEMORY, "out of memory");
    free(owned);
    return NULL;
  }
  m->w = (const float*)(blob + 64);
  m->owned = owned;
  m->threads = threads > 0 ? threads : 0;
  m->nt = threads > 0 ? threads : omp_get_max_threads();
#ifdef HONE_USES_DNNL
  if (dn_init(m) != 0) {
    free(owned);
    free(m);
    return NULL;
  }
#endif
  if (ARENA_BYTES > 0) {
    m->arena = (char*)aligned_alloc(64, (ARENA_BYTES + 63) / 64 * 64);
    if (!m->arena) {
      set_error(HONE_AOT_OUT_OF_MEMORY, "out of memory for a %llu-byte arena",
                (unsigned long long)ARENA_BYTES);
      if (m->free_dn) m->free_dn(m->dn);
      free(owned);
      free(m);
      return NULL;
    }
  }
  return m;
}

/* The blob stays owned by the caller and must outlive the model. */
HONE_EXPORT void* hone_aot_create_from_memory(const void* blob, uint64_t bytes, int threads) {
  if (!blob) {
    set_error(HONE_AOT_INVALID_ARGUMENT, "hone_aot_create_from_memory: NULL blob");
    return NULL;
  }
  return init((const unsigned char*)blob, bytes, NULL, threads);
}

HONE_EXPORT void* hone_aot_create(const char* weights_path, int threads) {
  if (!weights_path) {
    set_error(HONE_AOT_INVALID_ARGUMENT, "hone_aot_create: NULL weights path");
    return NULL;
  }
  FILE* f = fopen(weights_path, "rb");
  if (!f) {
    set_error(HONE_AOT_IO_ERROR, "cannot open weights '%s'", weights_path);
    return NULL;
  }
  fseek(f, 0, SEEK_END);
  const long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  if (size < 0) {
    fclose(f);
    set_error(HONE_AOT_IO_ERROR, "cannot size weights '%s'", weights_path);
    return NULL;
  }
  unsigned char* buf = (unsigned char*)aligned_alloc(64, ((uint64_t)size + 64) / 64 * 64);
  if (!buf) {
    fclose(f);
    set_error(HONE_AOT_OUT_OF_MEMORY, "out of memory reading '%s'", weights_path);
    return NULL;
  }
  const size_t got = fread(buf, 1, (size_t)size, f);
  fclose(f);
  if (got != (size_t)size) {
    free(buf);
    set_error(HONE_AOT_IO_ERROR, "short read of weights '%s'", weights_path);
    return NULL;
  }
  return init(buf, (uint64_t)size, buf, threads);
}

HONE_EXPORT void hone_aot_destroy(void* model) {
  hone_model* m = (hone_model*)model;
  if (!m) return;
  if (m->free_dn) m->free_dn(m->dn);
  free(m->arena);
  free(m->owned);
  free(m);
}
