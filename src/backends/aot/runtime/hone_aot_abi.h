/* The C ABI of a library the aot backend generates (model.so of a native-so
 * artifact), declared once: the generated source carries this text, hone's
 * loader (toolchain.cpp), the artifact's block.json (aot_backend.cpp) and the
 * standalone runner (tools/native-runner) include it.
 *
 *   void* m = hone_aot_create("weights.bin", 0);          (NULL: see last_error/last_status)
 *   hone_aot_output_shape(m, in_shapes, k, dims);          (per output, before run)
 *   if (hone_aot_run(m, in, in_shapes, out) != HONE_AOT_OK) puts(hone_aot_last_error());
 *   hone_aot_ran_output_shape(m, k, dims);                 (per output, after run)
 *
 * in[i] and out[k] point to the tensors' elements, C order, of the type
 * hone_aot_input_dtype / hone_aot_output_dtype names: "f32" (float), "i64"
 * (int64_t), "i32" (int32_t) or "bool" (uint8_t, 0 or 1). Version 3 added the
 * dtypes; before, every tensor was f32. An output whose length is known only
 * once the run has made it (NonZero's) is given its largest dims by
 * output_shape, and its real ones by ran_output_shape after the run; its
 * elements are the first of its buffer, C order. Version 4 added that.
 *   hone_aot_destroy(m);
 *
 * Plain C (C11, and C++ through extern "C"); stdint.h only. */
#ifndef HONE_AOT_ABI_H
#define HONE_AOT_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* hone_aot_abi_version() of a library built against this header. Raise it
 * when a function below changes or goes; a loader refuses another version. */
#define HONE_AOT_ABI_VERSION 4

/* What a call that fails returns (run, output_shape) or leaves in
 * hone_aot_last_status() (create, which returns NULL); the reason in words is
 * hone_aot_last_error(). Both are per thread. */
typedef enum hone_aot_status {
  HONE_AOT_OK = 0,
  HONE_AOT_INVALID_ARGUMENT = 1, /* a NULL pointer, a shape outside the compiled bounds */
  HONE_AOT_OUT_OF_MEMORY = 2,
  HONE_AOT_UNSUPPORTED_CPU = 3, /* compiled for CPU features this machine lacks */
  HONE_AOT_BAD_WEIGHTS = 4,     /* not this library's weights blob (magic, size, checksum) */
  HONE_AOT_IO_ERROR = 5,        /* the weights file cannot be read */
  HONE_AOT_KERNEL_FAILED = 6    /* a library the kernels call (oneDNN) failed */
} hone_aot_status;

/* X(name, return type, parameters): each function the library exports, as
 * hone_aot_<name>. Loaders resolve them by this list; the generated source
 * declares them from it, so a definition that drifts does not compile. */
#define HONE_AOT_FUNCTIONS(X)                                                                      \
  X(abi_version, int, (void))                                                                      \
  X(last_error, const char*, (void))                                                               \
  X(last_status, int, (void))                                                                      \
  X(create, void*, (const char* weights_path, int threads))                                        \
  X(create_from_memory, void*, (const void* blob, uint64_t bytes, int threads))                    \
  X(destroy, void, (void* model))                                                                  \
  X(run, int,                                                                                      \
    (void* model, const void* const* in, const int64_t* const* in_shapes, void* const* out))       \
  X(output_shape, int, (const void* model, const int64_t* const* in_shapes, int k, int64_t* dims)) \
  X(ran_output_shape, int, (const void* model, int k, int64_t* dims))                              \
  X(num_inputs, int, (const void* model))                                                          \
  X(num_outputs, int, (const void* model))                                                         \
  X(input_name, const char*, (const void* model, int i))                                           \
  X(output_name, const char*, (const void* model, int k))                                          \
  X(input_rank, int, (const void* model, int i))                                                   \
  X(output_rank, int, (const void* model, int k))                                                  \
  X(input_dim, int64_t, (const void* model, int i, int axis))                                      \
  X(input_dim_symbol, const char*, (const void* model, int i, int axis))                           \
  X(input_dtype, const char*, (const void* model, int i))                                          \
  X(output_dtype, const char*, (const void* model, int k))

/* A function pointer type per function: hone_aot_run_fn and so on. */
#define HONE_AOT_FN_TYPE(name, ret, params) typedef ret(*hone_aot_##name##_fn) params;
HONE_AOT_FUNCTIONS(HONE_AOT_FN_TYPE)
#undef HONE_AOT_FN_TYPE

#ifdef __cplusplus
}
#endif

#endif /* HONE_AOT_ABI_H */
