// Private to the cuda backend: half-precision activations. Under
// precision=bf16/fp16 with activations=half, every value of a Program has a
// storage (op.h: Storage), decided when the Program is built: a unit whose op
// has a plan_half() for its inputs reads and writes bf16/f16 (rank 4
// channels-last), any other runs its f32 plan(); a conversion step is
// inserted only where a consumer cannot read its producer's storage (and
// before the block's outputs, which leave as f32), once per value and
// storage, and listed in the kernel plan with its reason:
//
//   StoragePlan sp(program, settings.math.half, lines);
//   HONE_CHECK_OK(sp.plan_step(step, unit, slot_for, env));   // instead of plan_unit_step
//   HONE_TRY(size_t out, sp.as(slot, Storage::kF32, "block output"));
#pragma once

#include <array>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "backends/cuda/op.h"
#include "backends/cuda/program.h"

namespace hone::cuda {

/// Whether dims read in channels-last order ([N, H, W, C] for rank 4) list
/// their elements in row-major order: any rank but 4, or rank 4 with one
/// channel or one position. Such a kHalf value is also plain row-major, so a
/// view of it (a Flatten after a global pool) keeps its meaning.
bool channels_last_is_row_major(const dims_t& d);
/// `d` right-aligned to rank 4 (ones prepended) and permuted to [N, H, W, C].
dims_t channels_last_dims(const dims_t& d);
/// The dtype of a kHalf slot: kBF16 or kF16 (`half` as MathSettings::half).
DType half_dtype(int half);
/// "bf16 NHWC", "f16", "f32 NCHW", "f32": a storage as the kernel plan names it.
std::string storage_name(Storage s, int half, const dims_t& dims);

/// Enqueues y bf16/f16 [N, P, C] = x f32 [N, C, P] (`half` as gemm_rm's).
[[nodiscard]] Result<void> to_nhwc_half(const ExecCtx& c, CUdeviceptr x, CUdeviceptr y, int64_t N,
                                        int64_t C, int64_t P, int half);
/// Enqueues out f32 [N, M, P] = relu?(yh bf16/f16 [N, P, M] + bias[m] + z),
/// bias and z (f32 [N, M, P]) optional (0).
[[nodiscard]] Result<void> nhwc_half_epilogue(const ExecCtx& c, CUdeviceptr yh, CUdeviceptr out,
                                              CUdeviceptr bias, CUdeviceptr z, int64_t N, int64_t M,
                                              int64_t P, bool relu, int half);
/// Enqueues y (storage `to`) = x (storage `from`) over `dims`.
[[nodiscard]] Result<void> convert_storage(const ExecCtx& c, CUdeviceptr x, Storage from,
                                           CUdeviceptr y, Storage to, const dims_t& dims, int half);
/// Enqueues y = relu?(y + bias[c] + z) in place over a kHalf conv output y
/// [N, C, ...] (channels last); bias f32 [C] and z (kHalf, y's dims) optional.
[[nodiscard]] Result<void> half_bias_act(const ExecCtx& c, CUdeviceptr y, CUdeviceptr bias,
                                         CUdeviceptr z, int64_t n, int64_t C, bool relu, int half);

/// Row-major Y[m, n] = A[m, k] · Bᵀ, B stored [n, k], every operand and Y
/// bf16/f16 (`half`), summed in f32 on cuBLAS: a 1x1 stride-1 conv over
/// channels-last values (A the input [N*H*W, C], B its weights [M, C]).
[[nodiscard]] Result<void> gemm_half_out(const ExecCtx& c, int64_t m, int64_t n, int64_t k,
                                         CUdeviceptr a, CUdeviceptr b, CUdeviceptr y, int half);

/// A MaxPool's or AveragePool's output dims and the 16 ints hone_pool2d and
/// hone_pool2d_nhwc_half take after their pointers and count (H, W, OH, OW,
/// KH, KW, strides, begin pads, end pads, dilations, is_max, include_pad);
/// a 1-D pool is a 2-D one of height 1 (ops_misc.cpp).
struct PoolWindow {
  dims_t out;
  std::array<int, 16> args;
};
[[nodiscard]] Result<PoolWindow> pool_window(const Node& n, const dims_t& x);
/// Concat's output dims and axis, checked (ops_misc.cpp).
[[nodiscard]] Result<std::pair<dims_t, int64_t>> concat_dims(const Node& n,
                                                             const std::vector<dims_t>& in);
/// The plan_half() of a pool, Concat or Transpose node (ops_half.cpp); null
/// for other ops of create_misc.
HalfPlanner misc_half_planner(const Node& n, int half);
/// The plan_half() of the residual Add + LayerNormalization unit of `ln`
/// (ops_misc.cpp's create_add_layernorm; `keep_sum` and `sw` as there).
HalfPlanner add_layernorm_half_planner(const Node& ln, bool keep_sum, int half, LnSwap sw);
/// The plan_half() of a LayerNormalization unit alone (create_layernorm).
HalfPlanner layernorm_half_planner(const Node& ln, int half, LnSwap sw);

class StoragePlan {
 public:
  using SlotFor = std::function<Result<size_t>(ValueId)>;
  StoragePlan(Program& program, const Graph& g, int half, std::vector<std::string>& lines)
      : p_(program), g_(g), half_(half), lines_(lines) {}

  /// Plans unit `u` as a step: its inputs' slots from `slot_for`, plan_half()
  /// when the op has one for their storages, else plan(); conversion steps
  /// its inputs need are appended to the program first. The caller makes
  /// the output slots (output_slot()) and appends the step.
  [[nodiscard]] Result<void> plan_step(Program::Step& st, const Unit& u, const SlotFor& slot_for,
                                       const PlanEnv& env);
  /// A new arena slot for output `o` of a planned step, in the storage the
  /// plan writes.
  size_t output_slot(const OpPlan& op, size_t o);
  /// `slot` in storage `want`: itself, or its converted copy (made by a step
  /// appended now, once per slot and storage); `why` goes to the kernel plan.
  [[nodiscard]] Result<size_t> as(size_t slot, Storage want, const std::string& why);
  /// Names `slot` after value `name` in the conversion lines.
  void note(size_t slot, const std::string& name) { name_of_.emplace(slot, name); }

 private:
  size_t new_slot(const dims_t& dims, DType dtype, Storage storage);

  Program& p_;
  const Graph& g_;
  int half_;
  std::vector<std::string>& lines_;
  std::map<std::pair<size_t, Storage>, size_t> converted_;
  std::map<size_t, std::string> name_of_;  // slot -> the value's name, for the plan's lines
};

}  // namespace hone::cuda
