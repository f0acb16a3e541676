// Private to the aot backend: the state emit_c() writes C source with, shared
// by the step emitters (emit_ops.cpp) and the ABI scaffolding (emit.cpp).
#pragma once

#include <string>
#include <vector>

#include "backends/aot/program.h"
#include "backends/aot/shape_rules.h"

namespace hone::aot {

/// Text safe inside a C comment: a name or dim expression holding "*/"
/// (`(... * /det/Reshape_output_0:1)` once printed) would end it early.
inline std::string comment(std::string s) {
  for (size_t i = 0; (i = s.find("*/", i)) != std::string::npos;) s.replace(i, 2, "* /");
  return s;
}

class Emitter {
 public:
  explicit Emitter(const Program& p) : p_(p) {}

  const Program& program() const { return p_; }
  std::string& text() { return out_; }
  /// Appends one line at the current indent.
  void line(const std::string& s) {
    out_ += std::string(static_cast<size_t>(indent_) * 2, ' ') + s + "\n";
  }
  void open(const std::string& s) { line(s + " {"), ++indent_; }
  void close(const std::string& tail = "") { --indent_, line("}" + tail); }

  /// A C pointer expression to the storage of `v` (views followed).
  std::string ptr(ValueId v) const;
  /// The C expression of a dim ("d[0]", "(d[0]*256)", "16").
  std::string dim(const DimExpr& e) const { return p_.c(e); }
  const DimExprs& dims(ValueId v) const { return p_.values[static_cast<size_t>(v)].dims; }
  std::string numel(ValueId v) const { return dim(product(dims(v))); }
  /// The C element type of value `v` ("float", "int64_t", ...; typed_values.h).
  std::string ctype(ValueId v) const;
  /// The condition under which a loop of `work` iterations is worth a thread team.
  static std::string worth_threads(const std::string& work) { return "(" + work + ") > 32768"; }
  /// begin_parallel(), the one statement (a loop or a block) it applies to,
  /// end_parallel(): the statement is written twice, under
  /// `#pragma omp <directive> num_threads(c->nt)` when the team has more than
  /// one thread and `cond` holds, and plainly otherwise (under
  /// `#pragma omp simd` for a "parallel for simd" loop). libgomp runs a region
  /// whose if() is false as a team of one, which still allocates a team and
  /// ends with a futex wake: about 1 us per region, 7 per run of the small
  /// conv net, more than its whole batch-1 inference on oneDNN.
  void begin_parallel(const std::string& directive, const std::string& cond);
  void end_parallel();

  /// Writes the body of one step (inside its function).
  void emit_step(const Step& s);

 private:
  void emit_anchor(const Step& s, NodeId id, const std::string& y);
  void emit_chain(const Step& s);
  void emit_conv(const Node& n, NodeId id, const std::string& y, const Step& s);
  /// 3-D Conv (static spatial dims): im2col over depth, height and width,
  /// then one SGEMM per batch row and group (emit_conv3d.cpp).
  void emit_conv3d(const Node& n, NodeId id, const std::string& y, const Step& s);
  void emit_gemm(const Node& n, NodeId id, const std::string& y, float scale);
  void emit_matmul(const Step& s, NodeId id, const std::string& y);  // emit_matmul.cpp
  void emit_pool(const Node& n, NodeId id, const std::string& y);
  /// MaxPool and AveragePool over 3 static spatial dims, `planes` (N * C)
  /// of them (emit_conv3d.cpp); emit_pool has declared X and Y.
  void emit_pool3d(const Node& n, const Window2d& w, bool include_pad, const std::string& planes);
  /// For a window over a run-time dim (Window2d::dynamic): fails the run,
  /// with a message, where that dim is too small for the window (emit_window.cpp).
  void window_check(const Node& n, const Window2d& w);
  /// The extents of `w` as C: numbers, or for a dynamic window the names of
  /// consts this declares from the run-time dims (emit_window.cpp).
  struct WindowExtents {
    std::string ih, iw, oh, ow, in_plane, out_plane;  // planes: ih * iw, oh * ow
    bool dynamic = false;
    int64_t out_plane_n = 0, ow_n = 0;  // when static
    /// out_plane * k and ow * k: one number when static.
    std::string out_plane_times(int64_t k) const;
    std::string ow_times(int64_t k) const;
  };
  WindowExtents window_extents(const Window2d& w);
  void emit_softmax(const Node& n, NodeId id, const std::string& y);
  void emit_layer_norm(const Node& n, NodeId id, const std::string& y);
  void emit_instance_norm(const Node& n, NodeId id, const std::string& y);  // emit_norm.cpp
  void emit_resize(const Node& n, NodeId id, const std::string& y);         // emit_resize.cpp
  void emit_conv_transpose(const Node& n, NodeId id, const std::string& y,
                           const Step& s);  // conv_transpose.cpp
  void emit_reduce(const Node& n, NodeId id, const std::string& y);
  void emit_transpose(const Node& n, NodeId id, const std::string& y);
  void emit_concat(const Node& n, NodeId id, const std::string& y);
  /// Slice, Gather by one index, Expand and Split (Program::copies).
  void emit_copy(const Node& n, NodeId id, const std::string& y);
  /// Gather by indices read at run time, or by a constant list (gather.cpp).
  void emit_gather(const Node& n, NodeId id, const std::string& y);
  /// GatherND by index tuples read at run time or constant (gather_nd.cpp).
  void emit_gather_nd(const Node& n, NodeId id, const std::string& y);
  /// ScatterND: a copy of the data, each tuple's slice replaced or reduced (gather_nd.cpp).
  void emit_scatter_nd(const Node& n, NodeId id, const std::string& y);
  /// TopK: both outputs, either may be unused (topk.cpp).
  void emit_topk(const Node& n, NodeId id);
  /// CumSum, GatherElements and ScatterElements, OneHot (elements.cpp).
  void emit_cumsum(const Node& n, NodeId id, const std::string& y);
  void emit_elements(const Node& n, NodeId id, const std::string& y);
  void emit_one_hot(const Node& n, NodeId id, const std::string& y);
  /// Slice from starts read when the code runs (slice_bounds.cpp).
  void emit_slice_run_time(const Node& n, NodeId id, const std::string& y);
  /// Slice of a length it finds when it runs, any step (slice_bounds.cpp).
  void emit_slice_run_length(const Node& n, NodeId id, const std::string& y);
  /// GridSample by the reference's taps, ops/grid_sample_taps.h (grid_sample.cpp).
  void emit_grid_sample(const Node& n, NodeId id, const std::string& y);
  /// RoiAlign by the reference's points, ops/roi_align_points.h (roi_align.cpp).
  void emit_roi_align(const Node& n, NodeId id, const std::string& y);
  /// NonZero: the coordinates, then the length the run found (nonzero.cpp).
  void emit_nonzero(const Node& n, NodeId id, const std::string& y);
  /// NonMaxSuppression by ops/nms_select.h, then the length the run found (nms.cpp).
  void emit_nms(const Node& n, NodeId id, const std::string& y, const Step& st);
  /// ArgMax and ArgMin along one axis (arg_extreme.cpp).
  void emit_arg_extreme(const Node& n, NodeId id, const std::string& y);
  /// Pad with a constant (Program::pads), in emit_pad.cpp.
  void emit_pad(NodeId id, const std::string& y);
  void emit_pad_by_index(NodeId id, const std::string& y);
  /// y (contiguous, dims `o`) = the anchor's input read from element `from` with `strides`.
  void emit_strided(NodeId id, const std::string& from, const DimExprs& strides, const DimExprs& o,
                    const std::string& y);
  // Channels-last steps (emit_nhwc.cpp).
  void emit_anchor_nhwc(const Step& s, NodeId id, const std::string& y);
  void emit_conv_dnnl(const Node& n, NodeId id, const std::string& y, const Step& s);
  void emit_pool_nhwc(const Node& n, NodeId id, const std::string& y);
  void emit_pool_blocked(const Node& n, NodeId id, const std::string& y);  // emit_blocked.cpp
  /// Declares {a}0, {a}k0, {a}k1 and {a}p for one window axis (emit_blocked.cpp).
  void tap_range(const std::string& a, const std::string& o, int64_t stride, int64_t pad,
                 int64_t dil, int64_t k, int64_t in, int64_t pad_end);

  struct Parallel {
    size_t at;  // where the statement starts in out_
    std::string directive, cond;
  };

  const Program& p_;
  std::string out_;
  int indent_ = 0;
  std::vector<Parallel> parallel_;  // open begin_parallel() regions
};

/// Whether some step runs a conv through oneDNN: the library then carries
/// runtime/dnnl_conv.c (emit_nhwc.cpp).
bool uses_dnnl_conv(const Program& p);
/// Whether some step is a GridSample: the library then carries
/// ops/grid_sample_taps.h (grid_sample.cpp).
bool uses_grid_sample(const Program& p);
/// Whether some step is a RoiAlign: the library then carries
/// ops/roi_align_points.h (roi_align.cpp).
bool uses_roi_align(const Program& p);
/// "1.5f", "(-INFINITY)": a float as a C literal that reads back exactly.
std::string float_literal(float v);
/// The C offset into an operand of dims `op` (right-aligned, broadcast) for
/// flat index `idx` over `out[0, k)` (the operand's own strides).
std::string broadcast_offset(const Emitter& e, const DimExprs& out, size_t k, const DimExprs& op,
                             const std::string& idx);

}  // namespace hone::aot
