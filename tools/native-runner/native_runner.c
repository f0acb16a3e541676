/* native-runner: runs a hone `native-so` artifact without hone.
 *
 *   native-runner ARTIFACT_DIR --inputs DIR --outputs DIR [--threads N]
 *
 * Loads ARTIFACT_DIR/model.so with dlopen, creates the model from
 * ARTIFACT_DIR/weights.bin, reads DIR/input_<i>.npy (f32, C order), writes
 * output_<k>.npy. Links only libdl (and libc). Exit status 0 on success, 1 on
 * any error, with the reason on stderr. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hone_aot_abi.h"

/* The library's functions, resolved by the ABI header's list. */
typedef struct {
#define SLOT(name, ret, params) hone_aot_##name##_fn name;
  HONE_AOT_FUNCTIONS(SLOT)
#undef SLOT
} abi_t;

static int die(const char* what, const char* detail) {
  fprintf(stderr, "native-runner: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
  return 1;
}

/* Reads a little-endian f32 C-order .npy into *data with its shape. 0 on success. */
static int read_npy(const char* path, float** data, int64_t* shape, int max_rank, int* rank,
                    char* err) {
  FILE* f = fopen(path, "rb");
  unsigned char pre[10];
  if (!f) return sprintf(err, "cannot open %s", path), -1;
  if (fread(pre, 1, 8, f) != 8 || memcmp(pre, "\x93NUMPY", 6) != 0)
    return fclose(f), sprintf(err, "%s is not a .npy file", path), -1;
  uint32_t hlen = 0;
  if (pre[6] == 1) {
    if (fread(pre + 8, 1, 2, f) != 2) return fclose(f), sprintf(err, "%s: short header", path), -1;
    hlen = pre[8] | (uint32_t)pre[9] << 8;
  } else {
    unsigned char b[4];
    if (fread(b, 1, 4, f) != 4) return fclose(f), sprintf(err, "%s: short header", path), -1;
    hlen = b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
  }
  char* h = calloc(hlen + 1, 1);
  if (!h || fread(h, 1, hlen, f) != hlen)
    return free(h), fclose(f), sprintf(err, "%s: short header", path), -1;
  const char* d = strstr(h, "'descr'");
  const char* fo = strstr(h, "'fortran_order'");
  const char* s = strstr(h, "'shape'");
  if (!d || !strstr(d, "'<f4'") || !fo ||
      strncmp(strchr(fo, ':') + 1 + strspn(strchr(fo, ':') + 1, " "), "False", 5) || !s)
    return free(h), fclose(f), sprintf(err, "%s: needs dtype '<f4' in C order", path), -1;
  const char* p = strchr(s, '(');
  int64_t n = 1;
  *rank = 0;
  while (p && *++p && *p != ')') {
    if (*p < '0' || *p > '9') continue;
    if (*rank == max_rank) return free(h), fclose(f), sprintf(err, "%s: too many dims", path), -1;
    shape[*rank] = strtoll(p, (char**)&p, 10);
    n *= shape[(*rank)++];
    --p;
  }
  free(h);
  *data = malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
  if (!*data || fread(*data, sizeof(float), (size_t)n, f) != (size_t)n)
    return fclose(f), sprintf(err, "%s: fewer values than its shape holds", path), -1;
  fclose(f);
  return 0;
}

static int write_npy(const char* path, const float* data, const int64_t* shape, int rank) {
  char dims[512] = "", h[640];
  int64_t n = 1;
  for (int a = 0; a < rank; ++a) {
    snprintf(dims + strlen(dims), sizeof dims - strlen(dims), "%lld,%s", (long long)shape[a],
             rank > 1 ? " " : "");
    n *= shape[a];
  }
  int len =
      snprintf(h, sizeof h, "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }", dims);
  while ((10 + len + 1) % 64) h[len++] = ' '; /* header padded so data starts 64-aligned */
  h[len++] = '\n';
  FILE* f = fopen(path, "wb");
  if (!f) return -1;
  const unsigned char pre[10] = {
      0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(len & 0xff), (unsigned char)(len >> 8)};
  int ok = fwrite(pre, 1, 10, f) == 10 && fwrite(h, 1, (size_t)len, f) == (size_t)len &&
           fwrite(data, sizeof(float), (size_t)n, f) == (size_t)n;
  return (fclose(f) == 0 && ok) ? 0 : -1;
}

int main(int argc, char** argv) {
  const char *dir = NULL, *in_dir = NULL, *out_dir = NULL;
  int threads = 0;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--inputs") && i + 1 < argc)
      in_dir = argv[++i];
    else if (!strcmp(argv[i], "--outputs") && i + 1 < argc)
      out_dir = argv[++i];
    else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
      threads = atoi(argv[++i]);
    else if (argv[i][0] != '-' && !dir)
      dir = argv[i];
    else
      return die("unknown argument", argv[i]);
  }
  if (!dir || !in_dir || !out_dir)
    return die("usage: native-runner ARTIFACT_DIR --inputs DIR --outputs DIR [--threads N]", NULL);
  mkdir(
      out_dir,
      0755); /* like `hone run --outputs`; an existing folder is fine, other errors show on write */
  char path[4096], err[4400];
  snprintf(path, sizeof path, "%s/model.so", dir);
  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) return die("cannot load the library", dlerror());
  abi_t a;
#define RESOLVE(name, ret, params)                          \
  if (!(*(void**)& a.name = dlsym(lib, "hone_aot_" #name))) \
    return die("not a hone native-so library; missing", "hone_aot_" #name);
  HONE_AOT_FUNCTIONS(RESOLVE)
#undef RESOLVE
  if (a.abi_version() != HONE_AOT_ABI_VERSION) {
    snprintf(err, sizeof err, "the library has version %d, this runner reads %d", a.abi_version(),
             HONE_AOT_ABI_VERSION);
    return die("wrong aot ABI version", err);
  }
  snprintf(path, sizeof path, "%s/weights.bin", dir);
  void* m = a.create(path, threads);
  if (!m) return die("cannot create the model", a.last_error());
  const int ni = a.num_inputs(m), no = a.num_outputs(m);
  float** in = calloc((size_t)ni + 1, sizeof(float*));
  int64_t* shapes = calloc((size_t)ni * 16 + 1, sizeof(int64_t));
  const int64_t** shape_ptrs = calloc((size_t)ni + 1, sizeof(int64_t*));
  for (int i = 0; i < ni; ++i) {
    int rank = 0;
    if (strcmp(a.input_dtype(m, i), "f32") != 0)
      return snprintf(err, sizeof err, "input %d ('%s') is %s; this runner reads f32 .npy only", i,
                      a.input_name(m, i), a.input_dtype(m, i)),
             die("unsupported input", err);
    snprintf(path, sizeof path, "%s/input_%d.npy", in_dir, i);
    if (read_npy(path, &in[i], shapes + i * 16, 16, &rank, err) != 0) return die("bad input", err);
    if (rank != a.input_rank(m, i))
      return snprintf(err, sizeof err, "%s has rank %d, the model expects %d", path, rank,
                      a.input_rank(m, i)),
             die("bad input", err);
    shape_ptrs[i] = shapes + i * 16;
  }
  float** out = calloc((size_t)no + 1, sizeof(float*));
  int64_t* out_shapes = calloc((size_t)no * 16 + 1, sizeof(int64_t));
  for (int k = 0; k < no; ++k) {
    if (strcmp(a.output_dtype(m, k), "f32") != 0)
      return snprintf(err, sizeof err, "output %d ('%s') is %s; this runner writes f32 .npy only",
                      k, a.output_name(m, k), a.output_dtype(m, k)),
             die("unsupported output", err);
    if (a.output_rank(m, k) > 16 || a.output_shape(m, shape_ptrs, k, out_shapes + k * 16) != 0)
      return die("inputs rejected", a.last_error());
    int64_t n = 1;
    for (int d = 0; d < a.output_rank(m, k); ++d) n *= out_shapes[k * 16 + d];
    if (!(out[k] = malloc((size_t)(n > 0 ? n : 1) * sizeof(float))))
      return die("out of memory", NULL);
  }
  if (a.run(m, (const void* const*)in, shape_ptrs, (void* const*)out) != HONE_AOT_OK)
    return die("run failed", a.last_error());
  for (int k = 0; k < no; ++k) {
    /* The dims the run made (a length found as it ran is at most output_shape's). */
    if (a.ran_output_shape(m, k, out_shapes + k * 16) != 0)
      return die("run failed", a.last_error());
    snprintf(path, sizeof path, "%s/output_%d.npy", out_dir, k);
    if (write_npy(path, out[k], out_shapes + k * 16, a.output_rank(m, k)) != 0)
      return die("cannot write", path);
  }
  a.destroy(m);
  printf("native-runner: %d inputs, %d outputs written to %s\n", ni, no, out_dir);
  return 0;
}
