// The anchor ops of a step: convolution and matrix products through OpenBLAS
// (im2col for general convolutions, a direct loop for depthwise ones),
// pools, softmax, layer norm, reductions, transpose, concat and the strided
// copies of Slice and Gather by one index as loops.
#include <algorithm>

#include "backends/aot/emitter.h"
#include "backends/aot/gemm_fold.h"
#include "backends/aot/lstm.h"
#include "backends/aot/rnn.h"
#include "backends/aot/shape_rules.h"
#include "ops/attrs.h"
#include "ops/axis.h"

namespace hone::aot {
void Emitter::begin_parallel(const std::string& directive, const std::string& cond) {
  parallel_.push_back({out_.size(), directive, cond});
}

void Emitter::end_parallel() {
  const Parallel r = parallel_.back();
  parallel_.pop_back();
  const std::string stmt = out_.substr(r.at);
  out_.resize(r.at);
  line("if (c->nt > 1 && (" + r.cond + ")) {");
  line("#pragma omp " + r.directive + " num_threads(c->nt)");
  out_ += stmt;
  line("} else {");
  if (r.directive.starts_with("parallel for simd")) line("#pragma omp simd");
  out_ += stmt;
  line("}");
}

void Emitter::emit_step(const Step& st) {
  if (st.anchor >= 0) {
    // With a chain, the anchor writes the step's result buffer and the chain
    // then runs over it in place.
    const Node& n = p_.node(st.anchor);
    open("");
    emit_anchor(
        st, st.anchor,
        st.chain.empty() ? (n.outputs[0] >= 0 ? ptr(n.outputs[0]) : "NULL") : ptr(st.result));
    close();
  }
  // Chain nodes the GEMM absorbed (a scale, a Transpose) need no loop.
  if (!st.chain.empty() && !st.post_ops && st.chain.size() > gemm_scale(p_, st).absorbed)
    emit_chain(st);
}

void Emitter::emit_anchor(const Step& st, NodeId id, const std::string& y) {
  const Node& n = p_.node(id);
  const std::string& op = n.op_type;
  if (op == "LSTM") return emit_lstm(*this, n, id, y, st);
  if (op == "TopK") return emit_topk(n, id);
  if (op == "ArgMax" || op == "ArgMin") return emit_arg_extreme(n, id, y);
  if (op == "CumSum") return emit_cumsum(n, id, y);
  if (op == "GatherElements" || op == "ScatterElements") return emit_elements(n, id, y);
  if (op == "OneHot") return emit_one_hot(n, id, y);
  if (op == "NonZero") return emit_nonzero(n, id, y);
  if (op == "NonMaxSuppression") return emit_nms(n, id, y, st);
  if (op == "GridSample") return emit_grid_sample(n, id, y);
  if (op == "RoiAlign") return emit_roi_align(n, id, y);
  if (op == "GRU") return emit_gru(*this, n, id, st);
  if (st.nhwc) return emit_anchor_nhwc(st, id, y);
  if (op == "Conv") return emit_conv(n, id, y, st);
  if (op == "Gemm") return emit_gemm(n, id, y, gemm_scale(p_, st).alpha);
  if (op == "MatMul") return emit_matmul(st, id, y);
  if (op == "Softmax" || op == "LogSoftmax") return emit_softmax(n, id, y);
  if (op == "LayerNormalization") return emit_layer_norm(n, id, y);
  if (op == "InstanceNormalization") return emit_instance_norm(n, id, y);
  if (op == "Resize") return emit_resize(n, id, y);
  if (op == "ConvTranspose") return emit_conv_transpose(n, id, y, st);
  if (op.rfind("Reduce", 0) == 0) return emit_reduce(n, id, y);
  if (op == "Transpose") return emit_transpose(n, id, y);
  if (op == "Concat") return emit_concat(n, id, y);
  if (op == "Pad") return emit_pad(id, y);
  if (op == "Gather" && !gathers_one_constant(p_, n)) return emit_gather(n, id, y);
  if (op == "GatherND") return emit_gather_nd(n, id, y);
  if (op == "ScatterND") return emit_scatter_nd(n, id, y);
  if (op == "Slice" || op == "Gather" || op == "Expand" || op == "Split")
    return emit_copy(n, id, y);
  return emit_pool(n, id, y);
}

void Emitter::emit_conv(const Node& n, NodeId id, const std::string& y, const Step& st) {
  const auto& ops = p_.operands.at(id);
  const DimExprs& x = dims(ops[0]);
  if (x.size() == 5) return emit_conv3d(n, id, y, st);
  const DimExprs& w = dims(ops[1]);
  std::vector<int64_t> k;
  for (size_t i = 2; i < w.size(); ++i) k.push_back(w[i].value());
  const Window2d win = *window_of(n, x, k, false);
  const int64_t g = ops::conv_group(n), m = w[0].value(), cg = w[1].value();
  const int64_t c = cg * g, mg = m / g, ck = cg * win.kh * win.kw;
  line("const float* X = " + ptr(ops[0]) + ";");
  line("const float* Wt = " + ptr(ops[1]) + ";");
  line("const float* B = " + (ops.size() > 2 ? ptr(ops[2]) : std::string("NULL")) + ";");
  line("float* Y = " + y + ";");
  const std::string nb = dim(x[0]);
  window_check(n, win);
  const WindowExtents ext = window_extents(win);
  const std::string &ih = ext.ih, &iw = ext.iw, &oh = ext.oh, &ow = ext.ow;
  const std::string &in_plane = ext.in_plane, &out_plane = ext.out_plane;
  if (g == c && m == g) {
    // Row by row, one kernel tap at a time over the output columns it
    // reaches: the column loop has no bounds test and vectorizes (a direct
    // loop with the test in it did not: 30% of BlazeFace's time).
    line("/* depthwise " + c_int(win.kh) + "x" + c_int(win.kw) + ", stride " + c_int(win.sh) + "x" +
         c_int(win.sw) + ": per output row, one pass per kernel tap */");
    begin_parallel("parallel for",
                   worth_threads(nb + " * " + ext.out_plane_times(c * win.kh * win.kw)));
    open("for (int64_t pl = 0; pl < " + nb + " * " + c_int(c) + "; ++pl)");
    line("const int64_t ch = pl % " + c_int(c) + ";");
    line("const float* xp = X + pl * " + in_plane + ";");
    line("const float* wp = Wt + ch * " + c_int(win.kh * win.kw) + ";");
    line("float* yp = Y + pl * " + out_plane + ";");
    line("const float b = B ? B[ch] : 0.0f;");
    open("for (int64_t oh = 0; oh < " + oh + "; ++oh)");
    line("float* yr = yp + oh * " + ow + ";");
    line("for (int64_t ow = 0; ow < " + ow + "; ++ow) yr[ow] = b;");
    open("for (int64_t kh = 0; kh < " + c_int(win.kh) + "; ++kh)");
    line("const int64_t ih = oh * " + c_int(win.sh) + " - " + c_int(win.pt) + " + kh * " +
         c_int(win.dh) + ";");
    line("if (ih < 0 || ih >= " + ih + ") continue;");
    line("const float* xr = xp + ih * " + iw + ";");
    // Columns ow with 0 <= ow * sw + kw * dw - pl < iw, per tap and for all taps.
    auto first_col = [&](int64_t kw) {
      const int64_t off = kw * win.dw - win.pl;
      return off < 0 ? (-off + win.sw - 1) / win.sw : int64_t{0};
    };
    auto end_col = [&](int64_t kw) {
      const int64_t off = kw * win.dw - win.pl;
      return std::min(win.ow, win.iw - 1 - off < 0 ? int64_t{0} : (win.iw - 1 - off) / win.sw + 1);
    };
    int64_t lo_all = 0, hi_all = win.ow;
    for (int64_t kw = 0; kw < win.kw; ++kw) {
      lo_all = std::max(lo_all, first_col(kw));
      hi_all = std::min(hi_all, end_col(kw));
    }
    if (!win.dynamic && win.kw <= 7 && lo_all < hi_all) {
      // Inner columns take every tap of the row in one pass; the few border
      // columns take theirs one by one.
      std::string sum;
      for (int64_t kw = 0; kw < win.kw; ++kw)
        sum += (kw ? " + " : "") + std::string("w[") + c_int(kw) + "] * xr[ow * " + c_int(win.sw) +
               " + " + c_int(kw * win.dw - win.pl) + "]";
      line("const float* w = wp + kh * " + c_int(win.kw) + ";");
      line("for (int64_t ow = " + c_int(lo_all) + "; ow < " + c_int(hi_all) +
           "; ++ow) yr[ow] += " + sum + ";");
      for (int64_t kw = 0; kw < win.kw; ++kw) {
        const int64_t off = kw * win.dw - win.pl, a = first_col(kw), e = end_col(kw);
        const std::string tap =
            "yr[ow] += w[" + c_int(kw) + "] * xr[ow * " + c_int(win.sw) + " + " + c_int(off) + "];";
        if (a < lo_all)
          line("for (int64_t ow = " + c_int(a) + "; ow < " + c_int(lo_all) + "; ++ow) " + tap);
        if (hi_all < e)
          line("for (int64_t ow = " + c_int(hi_all) + "; ow < " + c_int(e) + "; ++ow) " + tap);
      }
      close();
      close();
      close();
      end_parallel();
      return;
    }
    open("for (int64_t kw = 0; kw < " + c_int(win.kw) + "; ++kw)");
    line("const float wv = wp[kh * " + c_int(win.kw) + " + kw];");
    line("const int64_t off = kw * " + c_int(win.dw) + " - " + c_int(win.pl) + ";");
    line("const int64_t lo = off < 0 ? (-off + " + c_int(win.sw - 1) + ") / " + c_int(win.sw) +
         " : 0;");
    const std::string last = win.dynamic ? "(IW - 1)" : c_int(win.iw - 1);
    line("int64_t hi = " + last + " - off < 0 ? 0 : (" + last + " - off) / " + c_int(win.sw) +
         " + 1;");
    line("if (hi > " + ow + ") hi = " + ow + ";");
    line("for (int64_t ow = lo; ow < hi; ++ow) yr[ow] += wv * xr[ow * " + c_int(win.sw) +
         " + off];");
    close();
    close();
    close();
    close();
    end_parallel();
    return;
  }
  const bool pointwise = st.scratch_floats.is_const() && st.scratch_floats.value() == 0;
  if (!pointwise) line("float* col = (float*)(c->A + " + c_int(st.scratch_offset) + ");");
  open("for (int64_t b = 0; b < " + nb + "; ++b)");
  open("for (int64_t g = 0; g < " + c_int(g) + "; ++g)");
  line("const float* xg = X + (b * " + c_int(c) + " + g * " + c_int(cg) + ") * " + in_plane + ";");
  line("float* yg = Y + (b * " + c_int(m) + " + g * " + c_int(mg) + ") * " + out_plane + ";");
  if (!pointwise) {
    line("/* im2col: [" + c_int(ck) + " x " + out_plane + "] */");
    begin_parallel("parallel for", worth_threads(ext.out_plane_times(ck)));
    open("for (int64_t r = 0; r < " + c_int(ck) + "; ++r)");
    line("const int64_t ci = r / " + c_int(win.kh * win.kw) + ", kh = (r / " + c_int(win.kw) +
         ") % " + c_int(win.kh) + ", kw = r % " + c_int(win.kw) + ";");
    line("float* dst = col + r * " + out_plane + ";");
    open("for (int64_t oh = 0; oh < " + oh + "; ++oh)");
    line("const int64_t ih = oh * " + c_int(win.sh) + " - " + c_int(win.pt) + " + kh * " +
         c_int(win.dh) + ";");
    line("float* d = dst + oh * " + ow + ";");
    open("if (ih < 0 || ih >= " + ih + ")");
    line("memset(d, 0, " + ext.ow_times(4) + ");");
    line("continue;");
    close();
    line("const float* src = xg + (ci * " + ih + " + ih) * " + iw + ";");
    open("for (int64_t ow = 0; ow < " + ow + "; ++ow)");
    line("const int64_t iw = ow * " + c_int(win.sw) + " - " + c_int(win.pl) + " + kw * " +
         c_int(win.dw) + ";");
    line("d[ow] = (iw >= 0 && iw < " + iw + ") ? src[iw] : 0.0f;");
    close();
    close();
    close();
    end_parallel();
  }
  open("if (B)");
  line("for (int64_t o = 0; o < " + c_int(mg) + "; ++o)");
  line("  for (int64_t i = 0; i < " + out_plane + "; ++i) yg[o * " + out_plane + " + i] = B[g * " +
       c_int(mg) + " + o];");
  close();
  line("SGEMM(0, 0, " + c_int(mg) + ", " + out_plane + ", " + c_int(ck) + ", 1.0f, Wt + g * " +
       c_int(mg * ck) + ", " + c_int(ck) + ", " + (pointwise ? "xg" : "col") + ", " + out_plane +
       ", B ? 1.0f : 0.0f, yg, " + out_plane + ");");
  close();
  close();
}

void Emitter::emit_gemm(const Node& n, NodeId id, const std::string& y, float scale) {
  const auto& ops = p_.operands.at(id);
  const DimExprs& a = dims(ops[0]);
  const DimExprs& b = dims(ops[1]);
  const ops::GemmAttrs ga = ops::gemm_attrs(n).value_or(ops::GemmAttrs{});
  const bool ta = ga.trans_a, tb = ga.trans_b;
  const std::string M = dim(ta ? a[1] : a[0]), K = dim(ta ? a[0] : a[1]), N = dim(tb ? b[0] : b[1]);
  // A scalar Mul/Div after the Gemm scales both terms (gemm_fold.h).
  const float alpha = ga.alpha * scale, beta = ga.beta * scale;
  const bool has_c = ops.size() > 2 && beta != 0.0f;
  line("const float* A = " + ptr(ops[0]) + ";");
  line("const float* Bm = " + ptr(ops[1]) + ";");
  line("float* Y = " + y + ";");
  line("const int64_t M = " + M + ", N = " + N + ", K = " + K + ";");
  if (has_c) {
    const DimExprs& cd = dims(ops[2]);
    // C broadcasts to [M, N]: its row and column strides are 0 where it is 1 wide.
    const bool rows = cd.size() == 2 && !is_one(cd[0]);
    const bool cols = !cd.empty() && !is_one(cd.back());
    line("const float* C = " + ptr(ops[2]) + ";");
    begin_parallel("parallel for", worth_threads("M * N"));
    line("for (int64_t i = 0; i < M; ++i)");
    line("  for (int64_t j = 0; j < N; ++j) Y[i * N + j] = " + float_literal(beta) + " * C[" +
         (rows ? std::string(cols ? "i * N + j" : "i") : std::string(cols ? "j" : "0")) + "];");
    end_parallel();
  }
  line("SGEMM(" + std::string(ta ? "1" : "0") + ", " + (tb ? "1" : "0") +
       ", (int)M, (int)N, (int)K, " + float_literal(alpha) + ", A, (int)" + dim(a[1]) +
       ", Bm, (int)" + dim(b[1]) + ", " + (has_c ? "1.0f" : "0.0f") + ", Y, (int)N);");
}

void Emitter::emit_pool(const Node& n, NodeId id, const std::string& y) {
  const ValueId xv = p_.operands.at(id)[0];
  const DimExprs& x = dims(xv);
  line("const float* X = " + ptr(xv) + ";");
  line("float* Y = " + y + ";");
  const std::string planes = dim(x[0] * x[1]);
  const bool is_max = n.op_type.find("Max") != std::string::npos;
  if (n.op_type.rfind("Global", 0) == 0) {
    const std::string sz = dim(product(x, 2, x.size()));
    begin_parallel("parallel for", worth_threads(planes + " * " + sz));
    open("for (int64_t pl = 0; pl < " + planes + "; ++pl)");
    line("const float* xp = X + pl * " + sz + ";");
    line(std::string("float acc = ") + (is_max ? "xp[0]" : "0.0f") + ";");
    line(std::string("for (int64_t i = 0; i < ") + sz + "; ++i) " +
         (is_max ? "acc = xp[i] > acc ? xp[i] : acc;" : "acc += xp[i];"));
    line(std::string("Y[pl] = ") + (is_max ? "acc;" : "acc / (float)" + sz + ";"));
    close();
    end_parallel();
    return;
  }
  const ops::PoolAttrs pa = ops::pool_attrs(n).value_or(ops::PoolAttrs{});
  const Window2d w = *window_of(n, x, pa.kernel_shape, pa.ceil_mode);
  if (x.size() == 5) return emit_pool3d(n, w, pa.count_include_pad, planes);
  const bool include_pad = pa.count_include_pad;
  window_check(n, w);
  const WindowExtents ext = window_extents(w);
  const std::string &ih = ext.ih, &iw = ext.iw, &oh = ext.oh, &ow = ext.ow;
  begin_parallel("parallel for", worth_threads(planes + " * " + ext.out_plane_times(w.kh * w.kw)));
  open("for (int64_t pl = 0; pl < " + planes + "; ++pl)");
  line("const float* xp = X + pl * " + ext.in_plane + ";");
  line("float* yp = Y + pl * " + ext.out_plane + ";");
  open("for (int64_t oh = 0; oh < " + oh + "; ++oh)");
  line("const int64_t h0 = oh * " + c_int(w.sh) + " - " + c_int(w.pt) + ";");
  open("for (int64_t ow = 0; ow < " + ow + "; ++ow)");
  line("const int64_t w0 = ow * " + c_int(w.sw) + " - " + c_int(w.pl) + ";");
  line("float acc = 0.0f;");
  line("int64_t cnt = 0, padded_h = 0, padded_w = 0;");
  open("for (int64_t kh = 0; kh < " + c_int(w.kh) + "; ++kh)");
  line("const int64_t ih = h0 + kh * " + c_int(w.dh) + ";");
  line("padded_h += ih >= -" + c_int(w.pt) + " && ih < " +
       (w.dynamic ? "IH + " + c_int(w.pb) : c_int(w.ih + w.pb)) + ";");
  line("if (ih < 0 || ih >= " + ih + ") continue;");
  open("for (int64_t kw = 0; kw < " + c_int(w.kw) + "; ++kw)");
  line("const int64_t iw = w0 + kw * " + c_int(w.dw) + ";");
  line("if (iw < 0 || iw >= " + iw + ") continue;");
  line("const float v = xp[ih * " + iw + " + iw];");
  line(is_max ? "if (cnt == 0 || v > acc) acc = v;" : "acc += v;");
  line("++cnt;");
  close();
  close();
  if (is_max) {
    line("yp[oh * " + ow + " + ow] = acc;");
  } else {
    if (include_pad) {
      open("for (int64_t kw = 0; kw < " + c_int(w.kw) + "; ++kw)");
      line("const int64_t iw = w0 + kw * " + c_int(w.dw) + ";");
      line("padded_w += iw >= -" + c_int(w.pl) + " && iw < " +
           (w.dynamic ? "IW + " + c_int(w.pr) : c_int(w.iw + w.pr)) + ";");
      close();
    }
    line("yp[oh * " + ow + " + ow] = acc / (float)" +
         (include_pad ? std::string("(padded_h * padded_w)") : std::string("cnt")) + ";");
  }
  close();
  close();
  close();
  end_parallel();
}

void Emitter::emit_softmax(const Node& n, NodeId id, const std::string& y) {
  const ValueId xv = p_.operands.at(id)[0];
  const DimExprs& x = dims(xv);
  const auto [a, b] = *softmax_range(p_, n);
  const std::string outer = dim(product(x, 0, static_cast<size_t>(a)));
  const std::string len = dim(product(x, static_cast<size_t>(a), static_cast<size_t>(b)));
  const std::string inner = dim(product(x, static_cast<size_t>(b), x.size()));
  line("const float* X = " + ptr(xv) + ";");
  line("float* Y = " + y + ";");
  line("const int64_t outer = " + outer + ", len = " + len + ", inner = " + inner + ";");
  if (inner == "1" && n.op_type == "Softmax") {
    // Rows are contiguous. The exps run as one flat loop over every row, so
    // short rows (attention at seq 8) still call libmvec 16 lanes at a time
    // instead of scalar expf; max/shift and sum/divide stay per row. Three
    // passes and an exp per element: worth a team at a quarter of a plain
    // loop's size.
    begin_parallel("parallel", worth_threads("outer * len * 4"));
    open("");
    line("#pragma omp for");
    open("for (int64_t o = 0; o < outer; ++o)");
    line("const float* x = X + o * len;");
    line("float* yv = Y + o * len;");
    line("float mx = x[0];");
    // From j = 0 (x[0] again is harmless): the trip count stays a multiple of
    // the vector width, where from 1 it leaves a 15-element scalar tail.
    line("#pragma omp simd reduction(max:mx)");
    line("for (int64_t j = 0; j < len; ++j) mx = x[j] > mx ? x[j] : mx;");
    line("#pragma omp simd");
    line("for (int64_t j = 0; j < len; ++j) yv[j] = x[j] - mx;");
    close();
    line("#pragma omp for simd");
    line("for (int64_t i = 0; i < outer * len; ++i) Y[i] = expf(Y[i]);");
    line("#pragma omp for");
    open("for (int64_t o = 0; o < outer; ++o)");
    line("float* yv = Y + o * len;");
    line("float sum = 0.0f;");
    line("#pragma omp simd reduction(+:sum)");
    line("for (int64_t j = 0; j < len; ++j) sum += yv[j];");
    line("#pragma omp simd");
    line("for (int64_t j = 0; j < len; ++j) yv[j] /= sum;");
    close();
    close();
    end_parallel();
    return;
  }
  if (inner == "1") {
    // LogSoftmax over contiguous rows: each pass one vectorized loop.
    begin_parallel("parallel for", worth_threads("outer * len * 4"));
    open("for (int64_t o = 0; o < outer; ++o)");
    line("const float* x = X + o * len;");
    line("float* yv = Y + o * len;");
    line("float mx = x[0];");
    line("#pragma omp simd reduction(max:mx)");
    line("for (int64_t j = 0; j < len; ++j) mx = x[j] > mx ? x[j] : mx;");
    line("float sum = 0.0f;");
    line("#pragma omp simd reduction(+:sum)");
    line("for (int64_t j = 0; j < len; ++j) sum += expf(x[j] - mx);");
    line("const float l = logf(sum);");
    line("#pragma omp simd");
    line("for (int64_t j = 0; j < len; ++j) yv[j] = x[j] - mx - l;");
    close();
    end_parallel();
    return;
  }
  begin_parallel("parallel for collapse(2)", worth_threads("outer * len * inner"));
  open("for (int64_t o = 0; o < outer; ++o)");
  open("for (int64_t in = 0; in < inner; ++in)");
  line("const float* x = X + o * len * inner + in;");
  line("float* yv = Y + o * len * inner + in;");
  line("float mx = x[0];");
  line("for (int64_t j = 1; j < len; ++j) mx = x[j * inner] > mx ? x[j * inner] : mx;");
  line("float sum = 0.0f;");
  if (n.op_type == "Softmax") {
    line(
        "for (int64_t j = 0; j < len; ++j) { const float e = expf(x[j * inner] - mx); yv[j * "
        "inner] = e; sum += e; }");
    line("for (int64_t j = 0; j < len; ++j) yv[j * inner] /= sum;");
  } else {
    line("for (int64_t j = 0; j < len; ++j) sum += expf(x[j * inner] - mx);");
    line("const float l = logf(sum);");
    line("for (int64_t j = 0; j < len; ++j) yv[j * inner] = x[j * inner] - mx - l;");
  }
  close();
  close();
  end_parallel();
}

void Emitter::emit_layer_norm(const Node& n, NodeId id, const std::string& y) {
  const auto& ops = p_.operands.at(id);
  const DimExprs& x = dims(ops[0]);
  const int64_t r = static_cast<int64_t>(x.size());
  // support() has checked the axis.
  const ops::NormAttrs na = ops::norm_attrs(n).value_or(ops::NormAttrs{});
  const int64_t axis = ops::try_normalize_axis(na.axis, r).value_or(0);
  const std::string rows = dim(product(x, 0, static_cast<size_t>(axis)));
  const int64_t cols = product(x, static_cast<size_t>(axis), x.size()).value();
  line("const float* X = " + ptr(ops[0]) + ";");
  line("const float* S = " + ptr(ops[1]) + ";");
  line("const float* Bv = " + (ops.size() > 2 ? ptr(ops[2]) : std::string("NULL")) + ";");
  line("float* Y = " + y + ";");
  begin_parallel("parallel for", worth_threads(rows + " * " + c_int(cols * 4)));  // 3 passes
  open("for (int64_t r = 0; r < " + rows + "; ++r)");
  line("const float* x = X + r * " + c_int(cols) + ";");
  line("float* yr = Y + r * " + c_int(cols) + ";");
  // The reductions say they may reorder (omp simd), so every pass vectorizes.
  line("float mean = 0.0f, var = 0.0f;");
  line("#pragma omp simd reduction(+:mean)");
  line("for (int64_t j = 0; j < " + c_int(cols) + "; ++j) mean += x[j];");
  line("mean /= " + c_int(cols) + ".0f;");
  line("#pragma omp simd reduction(+:var)");
  line("for (int64_t j = 0; j < " + c_int(cols) + "; ++j) var += (x[j] - mean) * (x[j] - mean);");
  line("const float inv = 1.0f / sqrtf(var / " + c_int(cols) + ".0f + " +
       float_literal(na.epsilon) + ");");
  line("#pragma omp simd");
  line("for (int64_t j = 0; j < " + c_int(cols) + "; ++j) yr[j] = (x[j] - mean) * inv * S[j]" +
       (ops.size() > 2 ? " + Bv[j];" : ";"));
  close();
  end_parallel();
}

void Emitter::emit_reduce(const Node& n, NodeId id, const std::string& y) {
  const ValueId xv = p_.operands.at(id)[0];
  const DimExprs& x = dims(xv);
  const std::vector<int64_t> axes = *reduce_axes(p_, n);
  line("const float* X = " + ptr(xv) + ";");
  line("float* Y = " + y + ";");
  if (axes.empty()) {
    line("memcpy(Y, X, sizeof(float) * " + dim(product(x)) + ");");
    return;
  }
  // Kept dims index the output; reduced dims are walked per output element.
  DimExprs kept, red;
  std::vector<DimExpr> kept_stride, red_stride;
  for (size_t i = 0; i < x.size(); ++i) {
    const bool r = std::binary_search(axes.begin(), axes.end(), static_cast<int64_t>(i));
    (r ? red : kept).push_back(x[i]);
    (r ? red_stride : kept_stride).push_back(product(x, i + 1, x.size()));
  }
  auto offset = [&](const DimExprs& d, const std::vector<DimExpr>& st, const std::string& idx) {
    std::string sum = "0";
    for (size_t i = 0; i < d.size(); ++i) {
      std::string t = "(" + idx + " / " + dim(product(d, i + 1, d.size())) + ")";
      if (i > 0) t = "(" + t + " % " + dim(d[i]) + ")";
      sum += " + " + t + " * " + dim(st[i]);
    }
    return sum;
  };
  const std::string& op = n.op_type;
  line("const int64_t nout = " + dim(product(kept)) + ", nred = " + dim(product(red)) + ";");
  begin_parallel("parallel for", worth_threads("nout * nred"));
  open("for (int64_t o = 0; o < nout; ++o)");
  line("const float* xb = X + " + offset(kept, kept_stride, "o") + ";");
  line(std::string("float acc = ") + (op == "ReduceMax" || op == "ReduceMin" ? "xb[0]" : "0.0f") +
       ";");
  open("for (int64_t j = 0; j < nred; ++j)");
  line("const float v = xb[" + offset(red, red_stride, "j") + "];");
  if (op == "ReduceMax")
    line("acc = v > acc ? v : acc;");
  else if (op == "ReduceMin")
    line("acc = v < acc ? v : acc;");
  else if (op == "ReduceL1")
    line("acc += fabsf(v);");
  else if (op == "ReduceL2" || op == "ReduceSumSquare")
    line("acc += v * v;");
  else
    line("acc += v;");
  close();
  line(op == "ReduceMean" ? "Y[o] = acc / (float)nred;"
       : op == "ReduceL2" ? "Y[o] = sqrtf(acc);"
                          : "Y[o] = acc;");
  close();
  end_parallel();
}

void Emitter::emit_transpose(const Node& n, NodeId id, const std::string& y) {
  const ValueId xv = p_.operands.at(id)[0];
  const DimExprs& x = dims(xv);
  const DimExprs& o = dims(n.outputs[0]);
  const std::vector<int64_t> perm =
      ops::transpose_perm(n, static_cast<int64_t>(x.size())).value_or(std::vector<int64_t>{});
  line("const " + ctype(xv) + "* X = " + ptr(xv) + ";");
  line(ctype(xv) + "* Y = " + y + ";");
  if (o.empty()) {
    line("Y[0] = X[0];");
    return;
  }
  const size_t r = o.size();
  std::string base = "0";
  for (size_t i = 0; i + 1 < r; ++i) {
    std::string t = "(o / " + dim(product(o, i + 1, r - 1)) + ")";
    if (i > 0) t = "(" + t + " % " + dim(o[i]) + ")";
    base += " + " + t + " * " + dim(product(x, static_cast<size_t>(perm[i]) + 1, x.size()));
  }
  const std::string last = dim(o[r - 1]);
  const std::string step = dim(product(x, static_cast<size_t>(perm[r - 1]) + 1, x.size()));
  begin_parallel("parallel for", worth_threads(dim(product(o))));
  open("for (int64_t o = 0; o < " + dim(product(o, 0, r - 1)) + "; ++o)");
  line("const " + ctype(xv) + "* xb = X + " + base + ";");
  line(ctype(xv) + "* yb = Y + o * " + last + ";");
  line("for (int64_t i = 0; i < " + last + "; ++i) yb[i] = xb[i * " + step + "];");
  close();
  end_parallel();
}

void Emitter::emit_copy(const Node& n, NodeId id, const std::string& y) {
  if (n.op_type == "Slice" && !p_.copies.count(id)) return emit_slice_run_length(n, id, y);
  const Program::Copy& c = p_.copies.at(id);
  if (n.op_type == "Split") {
    // One copy per output the graph reads, each from its part of the input.
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      const ValueId v = n.outputs[k];
      if (v < 0 || p_.values[static_cast<size_t>(v)].place == Place::kNone) continue;
      open("");
      emit_strided(id, dim(c.part_base[k]), c.strides, dims(v), ptr(v));
      close();
    }
    return;
  }
  if (!c.run_time_axes.empty()) return emit_slice_run_time(n, id, y);
  emit_strided(id, dim(c.base), c.strides, dims(n.outputs[0]), y);
}

void Emitter::emit_strided(NodeId id, const std::string& from, const DimExprs& strides,
                           const DimExprs& o, const std::string& y) {
  const std::string t = ctype(p_.operands.at(id)[0]);
  line("const " + t + "* X = " + ptr(p_.operands.at(id)[0]) + " + " + from + ";");
  line(t + "* Y = " + y + ";");
  if (o.empty()) {
    line("Y[0] = X[0];");
    return;
  }
  const size_t r = o.size();
  std::string base = "0";
  for (size_t i = 0; i + 1 < r; ++i) {
    std::string t = "(o / " + dim(product(o, i + 1, r - 1)) + ")";
    if (i > 0) t = "(" + t + " % " + dim(o[i]) + ")";
    base += " + " + t + " * " + dim(strides[i]);
  }
  const std::string last = dim(o[r - 1]);
  const std::string step = dim(strides[r - 1]);
  begin_parallel("parallel for", worth_threads(dim(product(o))));
  open("for (int64_t o = 0; o < " + dim(product(o, 0, r - 1)) + "; ++o)");
  line("const " + t + "* xb = X + " + base + ";");
  line(t + "* yb = Y + o * " + last + ";");
  line("for (int64_t i = 0; i < " + last + "; ++i) yb[i] = xb[i * " + step + "];");
  close();
  end_parallel();
}

void Emitter::emit_concat(const Node& n, NodeId id, const std::string& y) {
  const auto& ops = p_.operands.at(id);
  const DimExprs& o = dims(n.outputs[0]);
  const int64_t axis =
      ops::try_normalize_axis(ops::axis_attr(n), static_cast<int64_t>(o.size())).value_or(0);
  const size_t a = static_cast<size_t>(axis);
  const std::string inner = dim(product(o, a + 1, o.size()));
  const std::string t = ctype(n.outputs[0]);
  line(t + "* Y = " + y + ";");
  line("const int64_t outer = " + dim(product(o, 0, a)) + ", row = " + dim(o[a]) + " * " + inner +
       ";");
  line("int64_t at = 0;");
  for (ValueId v : ops) {
    const std::string chunk = dim(dims(v)[a]) + " * " + inner;
    open("");
    line("const " + t + "* X = " + ptr(v) + ";");
    line("const int64_t chunk = " + chunk + ";");
    line("for (int64_t r = 0; r < outer; ++r) memcpy(Y + r * row + at, X + r * chunk, sizeof(" + t +
         ") * chunk);");
    line("at += chunk;");
    close();
  }
}

}  // namespace hone::aot
