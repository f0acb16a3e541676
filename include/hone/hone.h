/* hone's C API: load, tune, run, save and export tuned models from C or from
 * any language that can call C (plain C99, opaque handles, no exceptions).
 *
 *   hone_model* m = NULL;
 *   if (hone_load("mlp.hone", &m) != HONE_OK) fprintf(stderr, "%s\n", hone_last_error());
 *   hone_model_infer(m, inputs, 1, outputs, 1);   hone_model_free(m);
 *
 * Every call returns a hone_status; on failure hone_last_error() gives the
 * message with its context chain ("invalid argument: ...\n  while ...") for
 * the calling thread, valid until that thread's next failing call. Strings
 * and arrays a model hands out live as long as the model. A model may be run
 * by hone_model_infer from many threads at once; free it only after. Link
 * with hone::hone (CMake) or `pkg-config --static --libs hone`, with a C++
 * linker (the library is C++).
 */
#ifndef HONE_HONE_H_
#define HONE_HONE_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The kinds of failure, as hone::ErrorCode (HONE_OK is success). */
typedef enum hone_status {
  HONE_OK = 0,
  HONE_INVALID_ARGUMENT = 1,
  HONE_UNSUPPORTED = 2,          /* this backend or component cannot do it */
  HONE_UNSUPPORTED_HARDWARE = 3, /* this machine cannot */
  HONE_NOT_FOUND = 4,
  HONE_CORRUPT = 5,
  HONE_OUT_OF_MEMORY = 6,
  HONE_FAILED_PRECONDITION = 7,
  HONE_IO = 8,
  HONE_INTERNAL = 9
} hone_status;

/* Element types, numbered as hone::DType. */
typedef enum hone_dtype {
  HONE_UNDEFINED = 0,
  HONE_F32 = 1,
  HONE_F16 = 2,
  HONE_BF16 = 3,
  HONE_F64 = 4,
  HONE_I8 = 5,
  HONE_U8 = 6,
  HONE_I16 = 7,
  HONE_U16 = 8,
  HONE_I32 = 9,
  HONE_U32 = 10,
  HONE_I64 = 11,
  HONE_U64 = 12,
  HONE_BOOL = 13
} hone_dtype;

/* A tuned model: the chosen backend, built and ready to run. */
typedef struct hone_model hone_model;

/* One input or output as the model declares it. dims[i] is -1 for a
 * dynamic axis; dim_names[i] is then its name ("batch"), else "". */
typedef struct hone_tensor_info {
  const char* name;
  hone_dtype dtype;
  size_t rank;
  const int64_t* dims;
  const char* const* dim_names;
} hone_tensor_info;

/* A dense, row-major tensor in caller memory.
 * Inputs: dtype, rank, dims, data and nbytes describe the caller's tensor.
 * Outputs: the caller sets data and nbytes (the buffer's capacity), dims
 * (room for `rank` entries) and rank (that room); on success hone sets
 * dtype, rank and dims to the output's and fills data. */
typedef struct hone_tensor {
  hone_dtype dtype;
  size_t rank;
  int64_t* dims;
  void* data;
  size_t nbytes;
} hone_tensor;

/* Options of hone_tune; zero-initialise, then set what you need (all
 * fields 0/NULL are the defaults). */
typedef struct hone_tune_options {
  const char* strategy; /* "max-throughput" (NULL), "min-latency", "first-wins", ... */
  const char* backends; /* comma-separated candidates; NULL: every backend */
  const char* dims;     /* ';'-separated declarations "batch=1:4:8;seq=16"; NULL: none */
  int threads;          /* kernel threads; 0: all cores */
  int no_cache;         /* nonzero: neither read nor write the tuning cache */
  uint64_t seed;        /* seed of the random samples; 0 means 1 */
  /* "fp32" (NULL: strict fp32) or "auto": also every reduced precision each
   * backend declares but fp8, each judged by its own bound; "auto,fp8": fp8
   * too (as `hone tune --precision`). */
  const char* precision;
} hone_tune_options;

/* The calling thread's last error message ("" when none yet). */
const char* hone_last_error(void);
/* "0.1.0" */
const char* hone_version(void);
/* Short name of a dtype ("f32"), "?" for an unknown value. */
const char* hone_dtype_name(hone_dtype dtype);
/* Bytes per element (0 for HONE_UNDEFINED or an unknown value). */
size_t hone_dtype_size(hone_dtype dtype);

/* Loads a .hone package (verified, not tuned again). On success *out owns
 * the model; free it with hone_model_free. */
hone_status hone_load(const char* path, hone_model** out);
/* Tunes an ONNX model on seeded random samples at its batch bounds (1 and 8
 * unless options->dims declares the batch dim), like `hone tune` without
 * --samples. options may be NULL for every default. */
hone_status hone_tune(const char* onnx_path, const hone_tune_options* options, hone_model** out);
/* Frees a model (NULL is fine). */
void hone_model_free(hone_model* model);

size_t hone_model_input_count(const hone_model* model);
size_t hone_model_output_count(const hone_model* model);
/* Fills *info for input/output i; HONE_INVALID_ARGUMENT when i is out of range. */
hone_status hone_model_input_info(const hone_model* model, size_t i, hone_tensor_info* info);
hone_status hone_model_output_info(const hone_model* model, size_t i, hone_tensor_info* info);
/* The chosen backend's name ("onednn"). */
const char* hone_model_backend(const hone_model* model);

/* Runs the model: inputs in graph order (checked against the model's
 * dtypes, ranks, static dims and tuned bounds), outputs into the caller's
 * buffers. HONE_INVALID_ARGUMENT names the tensor when a count, dtype, shape
 * or buffer size is wrong; then no output buffer was written. Thread-safe. */
hone_status hone_model_infer(const hone_model* model, const hone_tensor* inputs, size_t n_inputs,
                             hone_tensor* outputs, size_t n_outputs);

/* Runs the model on tensors in GPU memory with no host copy, for a model
 * whose backend runs on a GPU ("cuda"; others answer HONE_UNSUPPORTED naming
 * the backend). Every data pointer is device memory of CUDA device `device`.
 * Inputs as for hone_model_infer; outputs must be given with the output's
 * dtype, rank and exact dims (hone_model_output_info gives the static ones),
 * nbytes their size, and are written in place. The work starts after what
 * the caller enqueued on `stream` (a CUstream / cudaStream_t; NULL: the
 * legacy default stream) so far, work enqueued on `stream` after the call
 * runs after it, and the call returns without waiting for the device.
 * Errors as for hone_model_infer, naming the tensor. Thread-safe. */
hone_status hone_model_infer_device(const hone_model* model, const hone_tensor* inputs,
                                    size_t n_inputs, const hone_tensor* outputs, size_t n_outputs,
                                    int device, void* stream);

/* Saves the model as a .hone package (atomically). */
hone_status hone_model_save(const hone_model* model, const char* path);
/* Writes a deployable artifact: format "onnx", "native-so" or the chosen
 * backend's when NULL, into the new folder dir; "triton" adds a model
 * folder to the Triton model repository dir. */
hone_status hone_model_export(const hone_model* model, const char* dir, const char* format);

#ifdef __cplusplus
}
#endif

#endif /* HONE_HONE_H_ */
