/* The C API from C: tune a model, query it, run it with caller buffers, save,
 * load in the same process and compare, export, and the errors a caller
 * gets for bad calls. Built as C99 (in hone's build and against an installed
 * prefix by the install_consumer test).
 *
 *   capi_test MODEL.onnx WORK_DIR      (MODEL takes f32[batch,K], gives f32[batch,N]) */
#include <hone/hone.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int failures = 0;

#define CHECK(cond, ...)                                              \
  do {                                                                \
    if (!(cond)) {                                                    \
      fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                   \
      fprintf(stderr, "\n");                                          \
      ++failures;                                                     \
    }                                                                 \
  } while (0)

static int exists(const char* path) {
  struct stat st;
  return stat(path, &st) == 0;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: capi_test MODEL.onnx WORK_DIR\n");
    return 2;
  }
  char package[4096], onnx_dir[4096], onnx_file[4096], repo[4096];
  snprintf(package, sizeof package, "%s/capi.hone", argv[2]);
  snprintf(onnx_dir, sizeof onnx_dir, "%s/capi-onnx", argv[2]);
  snprintf(onnx_file, sizeof onnx_file, "%s/model.onnx", onnx_dir);
  snprintf(repo, sizeof repo, "%s/capi-triton", argv[2]);

  printf("hone %s\n", hone_version());
  hone_tune_options opts;
  memset(&opts, 0, sizeof opts);
  opts.backends = "reference,onednn";
  opts.dims = "batch=1:2:4";
  opts.threads = 1;
  opts.no_cache = 1;
  hone_model* tuned = NULL;
  hone_status st = hone_tune(argv[1], &opts, &tuned);
  if (st != HONE_OK) {
    fprintf(stderr, "hone_tune failed (%d): %s\n", (int)st, hone_last_error());
    return 1;
  }
  printf("tuned: chose %s\n", hone_model_backend(tuned));
  CHECK(hone_model_input_count(tuned) == 1, "inputs %zu", hone_model_input_count(tuned));
  CHECK(hone_model_output_count(tuned) == 1, "outputs %zu", hone_model_output_count(tuned));

  hone_tensor_info in_info, out_info;
  CHECK(hone_model_input_info(tuned, 0, &in_info) == HONE_OK, "%s", hone_last_error());
  CHECK(hone_model_output_info(tuned, 0, &out_info) == HONE_OK, "%s", hone_last_error());
  CHECK(in_info.dtype == HONE_F32 && in_info.rank == 2, "input %s", hone_dtype_name(in_info.dtype));
  CHECK(in_info.dims[0] == -1 && strcmp(in_info.dim_names[0], "batch") == 0,
        "input dim 0 is %lld '%s'", (long long)in_info.dims[0], in_info.dim_names[0]);
  CHECK(hone_model_input_info(tuned, 5, &in_info) == HONE_INVALID_ARGUMENT, "index 5 accepted");
  CHECK(strstr(hone_last_error(), "input 5 does not exist") != NULL, "%s", hone_last_error());
  if (failures) return 1;

  const int64_t batch = 3, k = in_info.dims[1], n = out_info.dims[1];
  float* x = malloc(sizeof(float) * (size_t)(batch * k));
  float* y = malloc(sizeof(float) * (size_t)(batch * n));
  float* y2 = malloc(sizeof(float) * (size_t)(batch * n));
  for (int64_t i = 0; i < batch * k; ++i) x[i] = (float)sin((double)i);
  int64_t xdims[2] = {batch, k}, ydims[4] = {0, 0, 0, 0}, y2dims[4] = {0, 0, 0, 0};
  hone_tensor in = {HONE_F32, 2, xdims, x, sizeof(float) * (size_t)(batch * k)};
  hone_tensor out = {HONE_UNDEFINED, 4, ydims, y, sizeof(float) * (size_t)(batch * n)};
  st = hone_model_infer(tuned, &in, 1, &out, 1);
  CHECK(st == HONE_OK, "infer: %s", hone_last_error());
  CHECK(out.dtype == HONE_F32 && out.rank == 2 && ydims[0] == batch && ydims[1] == n,
        "output rank %zu dims %lld,%lld", out.rank, (long long)ydims[0], (long long)ydims[1]);

  /* Save, load, and the loaded model gives the same bytes. */
  CHECK(hone_model_save(tuned, package) == HONE_OK, "save: %s", hone_last_error());
  hone_model* loaded = NULL;
  st = hone_load(package, &loaded);
  CHECK(st == HONE_OK, "load: %s", hone_last_error());
  if (loaded != NULL) {
    hone_tensor out2 = {HONE_UNDEFINED, 4, y2dims, y2, sizeof(float) * (size_t)(batch * n)};
    CHECK(hone_model_infer(loaded, &in, 1, &out2, 1) == HONE_OK, "infer loaded: %s",
          hone_last_error());
    CHECK(memcmp(y, y2, sizeof(float) * (size_t)(batch * n)) == 0, "loaded model's outputs differ");
  }

  /* Bad calls: a wrong byte count, a dim past the tuned bounds, a small output
   * buffer (left untouched), a missing package. */
  hone_tensor bad = in;
  bad.nbytes -= 4;
  CHECK(hone_model_infer(tuned, &bad, 1, &out, 1) == HONE_INVALID_ARGUMENT, "short input accepted");
  CHECK(strstr(hone_last_error(), "input 0 'x'") != NULL, "error: %s", hone_last_error());
  int64_t big_dims[2] = {9, k};
  float* big = calloc((size_t)(9 * k), sizeof(float));
  hone_tensor too_big = {HONE_F32, 2, big_dims, big, sizeof(float) * (size_t)(9 * k)};
  float* ybig = calloc((size_t)(9 * n), sizeof(float));
  int64_t ybig_dims[2];
  hone_tensor ybig_t = {HONE_UNDEFINED, 2, ybig_dims, ybig, sizeof(float) * (size_t)(9 * n)};
  CHECK(hone_model_infer(tuned, &too_big, 1, &ybig_t, 1) == HONE_INVALID_ARGUMENT,
        "batch 9 past the bound 4 accepted");
  CHECK(strstr(hone_last_error(), "batch") != NULL, "error: %s", hone_last_error());
  memset(y2, 0x7f, sizeof(float) * 2);
  hone_tensor small = {HONE_UNDEFINED, 4, y2dims, y2, sizeof(float) * 2};
  CHECK(hone_model_infer(tuned, &in, 1, &small, 1) == HONE_INVALID_ARGUMENT,
        "small buffer accepted");
  CHECK(strstr(hone_last_error(), "the buffer holds 8") != NULL, "error: %s", hone_last_error());
  CHECK(((unsigned char*)y2)[0] == 0x7f, "a failed call wrote the output buffer");
  /* The device entry: a host backend refuses it, naming itself; bad counts are named. */
  CHECK(hone_model_infer_device(tuned, &in, 1, &out, 1, 0, NULL) == HONE_UNSUPPORTED,
        "a host backend ran a device call: %s", hone_last_error());
  CHECK(strstr(hone_last_error(), "runs on the host") != NULL, "error: %s", hone_last_error());
  CHECK(hone_model_infer_device(tuned, &in, 2, &out, 1, 0, NULL) == HONE_INVALID_ARGUMENT,
        "two inputs accepted");
  CHECK(hone_model_infer_device(NULL, &in, 1, &out, 1, 0, NULL) == HONE_INVALID_ARGUMENT,
        "NULL model accepted");
  hone_model* none = NULL;
  CHECK(hone_load("/nonexistent/x.hone", &none) != HONE_OK && none == NULL,
        "missing package loaded");
  CHECK(strlen(hone_last_error()) > 0, "no message for a missing package");
  CHECK(hone_model_infer(NULL, &in, 1, &out, 1) == HONE_INVALID_ARGUMENT, "NULL model accepted");

  /* Export: ONNX into a new folder, and a Triton repository entry. */
  CHECK(hone_model_export(tuned, onnx_dir, "onnx") == HONE_OK, "export: %s", hone_last_error());
  CHECK(exists(onnx_file), "%s missing", onnx_file);
  CHECK(hone_model_export(tuned, onnx_dir, "onnx") == HONE_FAILED_PRECONDITION,
        "export over a full folder accepted");
  CHECK(hone_model_export(tuned, repo, "triton") == HONE_OK, "triton: %s", hone_last_error());
  /* The Triton model is named after the graph: one folder with its config
   * and version 1's model. */
  DIR* d = opendir(repo);
  int models = 0;
  struct dirent* e;
  while (d != NULL && (e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    ++models;
    char path[8192];
    snprintf(path, sizeof path, "%s/%s/config.pbtxt", repo, e->d_name);
    CHECK(exists(path), "%s missing", path);
    snprintf(path, sizeof path, "%s/%s/1/model.onnx", repo, e->d_name);
    CHECK(exists(path), "%s missing", path);
  }
  if (d != NULL) closedir(d);
  CHECK(models == 1, "%d models in %s", models, repo);
  CHECK(hone_model_export(tuned, repo, "triton") == HONE_FAILED_PRECONDITION,
        "a second export over the same model accepted");
  CHECK(strstr(hone_last_error(), "already exists") != NULL, "error: %s", hone_last_error());

  hone_model_free(loaded);
  hone_model_free(tuned);
  hone_model_free(NULL);
  free(x);
  free(y);
  free(y2);
  free(big);
  free(ybig);
  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("C API: all checks passed\n");
  return 0;
}
