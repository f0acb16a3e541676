// Declarations of what NVRTC provides to the cuda backend's kernels without
// any #include (src/backends/cuda/kernels/*.cu): the execution-space
// keywords, the built-in variables, vector types and the device functions
// the kernels call. tests/lint/cuda_kernels_check.py force-includes it and
// runs the host g++ with -fsyntax-only over each module's text exactly as
// NVRTC receives it, so a typo, an undeclared name or a type error is found
// without a GPU. Declarations only: nothing here runs, and nothing is
// defined, so the check says nothing about results.
//
//   g++ -std=c++17 -fsyntax-only -x c++ -include tests/lint/cuda_shim.h module.cu
//
// Add a declaration here (with CUDA's own signature, see the CUDA Math API
// and the CUDA C++ Programming Guide) when a kernel starts using another
// built-in; never add one that NVRTC lacks without headers (cuda_fp16.h's
// __half, cuda_bf16.h's __nv_bfloat16 and the std:: library are not there:
// the kernels hold bf16/f16 as unsigned short and convert in PTX).
//
// What g++ cannot check:
// - inline PTX (asm(...)): the template string is not parsed and the
//   constraint letters ("h", "f", "l") are not checked for the host
//   (-fsyntax-only stops before they would be);
// - execution spaces: a __device__ function called from host code, or a
//   __global__ that returns a value, is not refused (the keywords are empty);
// - __shared__ variables are plain locals here, so their storage rules
//   (no initialisers, per-block lifetime) are not enforced.
#pragma once

// NVRTC defines these; C text shared with the host (ops/grid_sample_taps.h)
// picks its NVRTC branch by them.
#define __CUDACC__ 1
#define __CUDACC_RTC__ 1

// Execution spaces and qualifiers: empty or their host meaning.
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __shared__
#define __constant__
#define __managed__
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)
// __restrict__ is a g++ keyword already.

typedef decltype(sizeof(0)) size_t;

// Built-in vector types (CUDA's vector_types.h, which NVRTC predefines).
struct __attribute__((aligned(8))) float2 {
  float x, y;
};
struct float3 {
  float x, y, z;
};
struct __attribute__((aligned(16))) float4 {
  float x, y, z, w;
};
struct __attribute__((aligned(8))) int2 {
  int x, y;
};
struct __attribute__((aligned(16))) int4 {
  int x, y, z, w;
};
struct __attribute__((aligned(8))) uint2 {
  unsigned x, y;
};
struct uint3 {
  unsigned x, y, z;
};
struct __attribute__((aligned(16))) uint4 {
  unsigned x, y, z, w;
};
struct dim3 {
  unsigned x, y, z;
};
float2 make_float2(float x, float y);
float3 make_float3(float x, float y, float z);
float4 make_float4(float x, float y, float z, float w);
int2 make_int2(int x, int y);
int4 make_int4(int x, int y, int z, int w);
uint2 make_uint2(unsigned x, unsigned y);
uint3 make_uint3(unsigned x, unsigned y, unsigned z);
uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w);

// Built-in variables: read-only in device code.
extern const uint3 threadIdx;
extern const uint3 blockIdx;
extern const dim3 blockDim;
extern const dim3 gridDim;
extern const int warpSize;

// Synchronisation and warp functions.
void __syncthreads();
void __syncwarp(unsigned mask = 0xffffffffu);
void __threadfence();
void __threadfence_block();
void __threadfence_system();
#define HONE_SHIM_SHFL(T)                                                   \
  T __shfl_sync(unsigned mask, T var, int src, int width = 32);             \
  T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = 32);   \
  T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = 32); \
  T __shfl_xor_sync(unsigned mask, T var, int lane_mask, int width = 32);
HONE_SHIM_SHFL(int)
HONE_SHIM_SHFL(unsigned)
HONE_SHIM_SHFL(long)
HONE_SHIM_SHFL(unsigned long)
HONE_SHIM_SHFL(long long)
HONE_SHIM_SHFL(unsigned long long)
HONE_SHIM_SHFL(float)
HONE_SHIM_SHFL(double)
#undef HONE_SHIM_SHFL
unsigned __ballot_sync(unsigned mask, int predicate);
int __any_sync(unsigned mask, int predicate);
int __all_sync(unsigned mask, int predicate);
unsigned __activemask();

// Atomics (CUDA C++ Programming Guide, "Atomic Functions").
int atomicAdd(int* address, int val);
unsigned atomicAdd(unsigned* address, unsigned val);
unsigned long long atomicAdd(unsigned long long* address, unsigned long long val);
float atomicAdd(float* address, float val);
double atomicAdd(double* address, double val);
int atomicSub(int* address, int val);
unsigned atomicSub(unsigned* address, unsigned val);
int atomicExch(int* address, int val);
unsigned atomicExch(unsigned* address, unsigned val);
unsigned long long atomicExch(unsigned long long* address, unsigned long long val);
float atomicExch(float* address, float val);
int atomicMin(int* address, int val);
unsigned atomicMin(unsigned* address, unsigned val);
long long atomicMin(long long* address, long long val);
unsigned long long atomicMin(unsigned long long* address, unsigned long long val);
int atomicMax(int* address, int val);
unsigned atomicMax(unsigned* address, unsigned val);
long long atomicMax(long long* address, long long val);
unsigned long long atomicMax(unsigned long long* address, unsigned long long val);
int atomicCAS(int* address, int compare, int val);
unsigned atomicCAS(unsigned* address, unsigned compare, unsigned val);
unsigned long long atomicCAS(unsigned long long* address, unsigned long long compare,
                             unsigned long long val);
int atomicAnd(int* address, int val);
unsigned atomicAnd(unsigned* address, unsigned val);
unsigned long long atomicAnd(unsigned long long* address, unsigned long long val);
int atomicOr(int* address, int val);
unsigned atomicOr(unsigned* address, unsigned val);
unsigned long long atomicOr(unsigned long long* address, unsigned long long val);
int atomicXor(int* address, int val);
unsigned atomicXor(unsigned* address, unsigned val);
unsigned long long atomicXor(unsigned long long* address, unsigned long long val);

// Read-only loads through the texture path.
#define HONE_SHIM_LDG(T) T __ldg(const T* ptr);
HONE_SHIM_LDG(char)
HONE_SHIM_LDG(signed char)
HONE_SHIM_LDG(unsigned char)
HONE_SHIM_LDG(short)
HONE_SHIM_LDG(unsigned short)
HONE_SHIM_LDG(int)
HONE_SHIM_LDG(unsigned)
HONE_SHIM_LDG(long long)
HONE_SHIM_LDG(unsigned long long)
HONE_SHIM_LDG(float)
HONE_SHIM_LDG(double)
HONE_SHIM_LDG(float2)
HONE_SHIM_LDG(float4)
HONE_SHIM_LDG(int2)
HONE_SHIM_LDG(int4)
HONE_SHIM_LDG(uint2)
HONE_SHIM_LDG(uint4)
#undef HONE_SHIM_LDG

// Address-space conversion (PTX cvta), as ldmatrix and cp.async take it.
extern "C" size_t __cvta_generic_to_shared(const void* ptr);
extern "C" size_t __cvta_generic_to_global(const void* ptr);

// Bit reinterpretation and integer intrinsics.
float __int_as_float(int x);
int __float_as_int(float x);
float __uint_as_float(unsigned x);
unsigned __float_as_uint(float x);
double __longlong_as_double(long long x);
long long __double_as_longlong(double x);
int __clz(int x);
int __clzll(long long x);
int __popc(unsigned x);
int __popcll(unsigned long long x);
int __ffs(int x);
int __ffsll(long long x);
unsigned __brev(unsigned x);
int __mul24(int x, int y);
int __mulhi(int x, int y);
long long __mul64hi(long long x, long long y);

// Fast-math intrinsics (the kernels avoid them for accuracy; declared so a
// use is a decision, not a compile error on the GPU only).
float __expf(float x);
float __logf(float x);
float __sinf(float x);
float __cosf(float x);
float __powf(float x, float y);
float __fdividef(float x, float y);
float __frcp_rn(float x);
float __fsqrt_rn(float x);
float __saturatef(float x);
float __fmaf_rn(float x, float y, float z);
double __dmul_rn(double x, double y);

// The CUDA math library in single and double precision (C linkage, as
// CUDA's math_functions.h declares them, which also matches g++'s builtins).
#define HONE_SHIM_MATH1(name)       \
  extern "C" double name(double x); \
  extern "C" float name##f(float x);
#define HONE_SHIM_MATH2(name)                 \
  extern "C" double name(double x, double y); \
  extern "C" float name##f(float x, float y);
HONE_SHIM_MATH1(exp)
HONE_SHIM_MATH1(exp2)
HONE_SHIM_MATH1(exp10)
HONE_SHIM_MATH1(expm1)
HONE_SHIM_MATH1(log)
HONE_SHIM_MATH1(log2)
HONE_SHIM_MATH1(log10)
HONE_SHIM_MATH1(log1p)
HONE_SHIM_MATH1(sqrt)
HONE_SHIM_MATH1(rsqrt)
HONE_SHIM_MATH1(cbrt)
HONE_SHIM_MATH1(sin)
HONE_SHIM_MATH1(cos)
HONE_SHIM_MATH1(tan)
HONE_SHIM_MATH1(asin)
HONE_SHIM_MATH1(acos)
HONE_SHIM_MATH1(atan)
HONE_SHIM_MATH1(sinh)
HONE_SHIM_MATH1(cosh)
HONE_SHIM_MATH1(tanh)
HONE_SHIM_MATH1(asinh)
HONE_SHIM_MATH1(acosh)
HONE_SHIM_MATH1(atanh)
HONE_SHIM_MATH1(erf)
HONE_SHIM_MATH1(erfc)
HONE_SHIM_MATH1(fabs)
HONE_SHIM_MATH1(floor)
HONE_SHIM_MATH1(ceil)
HONE_SHIM_MATH1(trunc)
HONE_SHIM_MATH1(round)
HONE_SHIM_MATH1(rint)
HONE_SHIM_MATH1(nearbyint)
HONE_SHIM_MATH2(pow)
HONE_SHIM_MATH2(fmod)
HONE_SHIM_MATH2(remainder)
HONE_SHIM_MATH2(fmax)
HONE_SHIM_MATH2(fmin)
HONE_SHIM_MATH2(atan2)
HONE_SHIM_MATH2(copysign)
HONE_SHIM_MATH2(hypot)
HONE_SHIM_MATH2(fdim)
#undef HONE_SHIM_MATH1
#undef HONE_SHIM_MATH2
extern "C" double fma(double x, double y, double z);
extern "C" float fmaf(float x, float y, float z);
extern "C" int isnan(double x);
extern "C" int isinf(double x);
extern "C" int isfinite(double x);
extern "C" int abs(int x);
extern "C" long long llabs(long long x);
extern "C" long long llround(double x);

// The C++ overloads CUDA adds for float (math_functions.hpp).
float exp(float x);
float log(float x);
float sqrt(float x);
float fabs(float x);
float floor(float x);
float ceil(float x);
float tanh(float x);
float pow(float x, float y);
float fmax(float x, float y);
float fmin(float x, float y);
float fma(float x, float y, float z);
long long abs(long long x);

// min and max as CUDA overloads them (math_functions.hpp), mixed signedness included.
#define HONE_SHIM_MINMAX(name)                                         \
  int name(int a, int b);                                              \
  unsigned name(unsigned a, unsigned b);                               \
  unsigned name(int a, unsigned b);                                    \
  unsigned name(unsigned a, int b);                                    \
  long name(long a, long b);                                           \
  unsigned long name(unsigned long a, unsigned long b);                \
  unsigned long name(long a, unsigned long b);                         \
  unsigned long name(unsigned long a, long b);                         \
  long long name(long long a, long long b);                            \
  unsigned long long name(unsigned long long a, unsigned long long b); \
  unsigned long long name(long long a, unsigned long long b);          \
  unsigned long long name(unsigned long long a, long long b);          \
  float name(float a, float b);                                        \
  double name(double a, double b);                                     \
  double name(float a, double b);                                      \
  double name(double a, float b);
HONE_SHIM_MINMAX(min)
HONE_SHIM_MINMAX(max)
#undef HONE_SHIM_MINMAX
