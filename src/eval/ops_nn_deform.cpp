// Convolution relatives of opsets 18-19: Col2Im (18), which folds column
// blocks back into an image (the adjoint of im2col), and DeformConv (19),
// a convolution whose taps are displaced by learned offsets and read by
// bilinear interpolation. Both accumulate in double.
#include <cmath>

#include "eval/kernel_util.h"
#include "eval/ops_nn_internal.h"
#include "ops/attrs.h"

namespace hone::eval::nn {
namespace {

/// Per-spatial-dim attribute list, `fallback` each when absent.
Result<std::vector<int64_t>> spatial_attr(const Node& node, const char* name, size_t n,
                                          int64_t fallback, const std::string& op) {
  std::vector<int64_t> v = node.attr_ints(name, std::vector<int64_t>(n, fallback));
  if (v.size() != n)
    return fail(ErrorCode::kInvalidArgument, op + " '" + name + "' has " +
                                                 std::to_string(v.size()) + " values, expected " +
                                                 std::to_string(n));
  return v;
}

Result<void> col2im(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  HONE_TRY(const Tensor* image_t, ctx.tensor(1));
  HONE_TRY(const Tensor* block_t, ctx.tensor(2));
  HONE_TRY(const std::vector<int64_t> image, read_int_list(*image_t, "Col2Im image_shape"));
  HONE_TRY(const std::vector<int64_t> block, read_int_list(*block_t, "Col2Im block_shape"));
  const size_t sp = image.size();
  if (x->rank() != 3 || sp == 0 || block.size() != sp)
    return fail(ErrorCode::kInvalidArgument,
                "Col2Im needs a 3-D input [N, C * prod(block_shape), L] and image_shape and "
                "block_shape of one length, got " +
                    x->describe() + ", " + image_t->describe() + ", " + block_t->describe());
  const Node& node = ctx.node();
  HONE_TRY(const auto dil, spatial_attr(node, "dilations", sp, 1, "Col2Im"));
  HONE_TRY(const auto strides, spatial_attr(node, "strides", sp, 1, "Col2Im"));
  HONE_TRY(const auto pads, spatial_attr(node, "pads", 2 * sp, 0, "Col2Im"));
  const int64_t kprod = product(block);
  if (kprod <= 0 || x->dim(1) % kprod != 0)
    return fail(ErrorCode::kInvalidArgument,
                "Col2Im input " + x->describe() +
                    ": dim 1 must be a multiple of prod(block_shape) " + std::to_string(kprod));
  std::vector<int64_t> blocks(sp);
  for (size_t d = 0; d < sp; ++d) {
    if (strides[d] <= 0 || dil[d] <= 0 || block[d] <= 0 || image[d] < 0 || pads[d] < 0 ||
        pads[d + sp] < 0)
      return fail(ErrorCode::kInvalidArgument,
                  "Col2Im needs positive strides, dilations and block_shape, and non-negative "
                  "image_shape and pads");
    blocks[d] = (image[d] + pads[d] + pads[d + sp] - dil[d] * (block[d] - 1) - 1) / strides[d] + 1;
    if (blocks[d] <= 0)
      return fail(ErrorCode::kInvalidArgument,
                  "Col2Im block_shape " + block_t->describe() + " does not fit image_shape " +
                      image_t->describe() + " on dim " + std::to_string(d));
  }
  if (product(blocks) != x->dim(2))
    return fail(ErrorCode::kInvalidArgument,
                "Col2Im input " + x->describe() + " has " + std::to_string(x->dim(2)) +
                    " blocks; image_shape, block_shape and the attributes give " +
                    std::to_string(product(blocks)));
  std::vector<int64_t> shape{x->dim(0), x->dim(1) / kprod};
  shape.insert(shape.end(), image.begin(), image.end());
  HONE_CHECK_OK(check_result_size(shape, "Col2Im output"));
  const int64_t n = x->dim(0), c = x->dim(1) / kprod, L = x->dim(2), pixels = product(image);
  const HostVector<double> in = to_doubles(*x);
  HostVector<double> out(static_cast<size_t>(n * c * pixels), 0.0);
  std::vector<int64_t> k(sp), b(sp);
  for (int64_t col = 0; col < n * c * kprod; ++col) {
    // col = (batch, channel, kernel tap); split the tap into per-dim offsets.
    int64_t t = col % kprod;
    for (size_t d = sp; d-- > 0;) {
      k[d] = t % block[d];
      t /= block[d];
    }
    const int64_t plane = col / kprod;  // batch * c + channel
    for (int64_t l = 0; l < L; ++l) {
      int64_t r = l, at = 0;
      bool inside = true;
      for (size_t d = sp; d-- > 0;) {
        b[d] = r % blocks[d];
        r /= blocks[d];
      }
      for (size_t d = 0; d < sp && inside; ++d) {
        const int64_t p = b[d] * strides[d] - pads[d] + k[d] * dil[d];
        inside = p >= 0 && p < image[d];
        at = at * image[d] + p;
      }
      if (inside)
        out[static_cast<size_t>(plane * pixels + at)] += in[static_cast<size_t>(col * L + l)];
    }
  }
  ctx.set_output(0, from_doubles(x->dtype(), shape, out));
  return {};
}

/// X[h, w] of one plane by bilinear interpolation; taps outside are zero.
double bilinear(const double* plane, int64_t H, int64_t W, double h, double w) {
  if (h <= -1.0 || h >= static_cast<double>(H) || w <= -1.0 || w >= static_cast<double>(W))
    return 0.0;
  const double h0f = std::floor(h), w0f = std::floor(w);
  const int64_t h0 = static_cast<int64_t>(h0f), w0 = static_cast<int64_t>(w0f);
  const double lh = h - h0f, lw = w - w0f;
  auto at = [&](int64_t y, int64_t x) {
    return y >= 0 && y < H && x >= 0 && x < W ? plane[y * W + x] : 0.0;
  };
  return (1 - lh) * (1 - lw) * at(h0, w0) + (1 - lh) * lw * at(h0, w0 + 1) +
         lh * (1 - lw) * at(h0 + 1, w0) + lh * lw * at(h0 + 1, w0 + 1);
}

Result<void> deform_conv(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  HONE_TRY(const Tensor* w_t, ctx.tensor(1));
  HONE_TRY(const Tensor* off_t, ctx.tensor(2));
  const Node& node = ctx.node();
  if (x->rank() != 4 || w_t->rank() != 4 || off_t->rank() != 4)
    return fail(ErrorCode::kUnsupported,
                "DeformConv is implemented for 2-D images (X [N, C, H, W]) only, got X " +
                    x->describe() + ", W " + w_t->describe() + ", offset " + off_t->describe());
  if (!is_floating(x->dtype()))
    return fail(unsupported_dtype(x->dtype(), "a floating-point type").add_context("DeformConv X"));
  const int64_t N = x->dim(0), C = x->dim(1), H = x->dim(2), W = x->dim(3);
  const int64_t OC = w_t->dim(0), kh = w_t->dim(2), kw = w_t->dim(3);
  HONE_TRY(const ops::ConvAttrs ca, ops::conv_attrs(node));
  const int64_t group = ca.group, og = node.attr_int("offset_group", 1);
  HONE_TRY(const auto ks, spatial_attr(node, "kernel_shape", 2, 0, "DeformConv"));
  if ((node.has_attr("kernel_shape") && (ks[0] != kh || ks[1] != kw)) || group <= 0 || og <= 0 ||
      C != w_t->dim(1) * group || OC % group != 0 || C % og != 0)
    return fail(ErrorCode::kInvalidArgument, "DeformConv X " + x->describe() + ", W " +
                                                 w_t->describe() + ", group " +
                                                 std::to_string(group) + " and offset_group " +
                                                 std::to_string(og) + " do not agree");
  HONE_TRY(const auto dil, spatial_attr(node, "dilations", 2, 1, "DeformConv"));
  HONE_TRY(const auto strides, spatial_attr(node, "strides", 2, 1, "DeformConv"));
  HONE_TRY(const auto pads, spatial_attr(node, "pads", 4, 0, "DeformConv"));
  for (int64_t v : {strides[0], strides[1], dil[0], dil[1]})
    if (v <= 0)
      return fail(ErrorCode::kInvalidArgument, "DeformConv strides and dilations must be positive");
  const int64_t OH = (H + pads[0] + pads[2] - dil[0] * (kh - 1) - 1) / strides[0] + 1;
  const int64_t OW = (W + pads[1] + pads[3] - dil[1] * (kw - 1) - 1) / strides[1] + 1;
  const int64_t taps = kh * kw;
  if (off_t->dim(0) != N || off_t->dim(1) != og * taps * 2 || off_t->dim(2) != OH ||
      off_t->dim(3) != OW)
    return fail(ErrorCode::kInvalidArgument,
                "DeformConv offset " + off_t->describe() + " must be [" + std::to_string(N) + ", " +
                    std::to_string(og * taps * 2) + ", " + std::to_string(OH) + ", " +
                    std::to_string(OW) + "]");
  HostVector<double> bias, mask;
  if (ctx.has_input(3)) {
    if (ctx.input(3).numel() != OC)
      return fail(ErrorCode::kInvalidArgument, "DeformConv B " + ctx.input(3).describe() +
                                                   " must have " + std::to_string(OC) + " values");
    bias = to_doubles(ctx.input(3));
  }
  if (ctx.has_input(4)) {
    const Tensor& m = ctx.input(4);
    if (m.rank() != 4 || m.dim(0) != N || m.dim(1) != og * taps || m.dim(2) != OH || m.dim(3) != OW)
      return fail(ErrorCode::kInvalidArgument,
                  "DeformConv mask " + m.describe() + " must be [" + std::to_string(N) + ", " +
                      std::to_string(og * taps) + ", " + std::to_string(OH) + ", " +
                      std::to_string(OW) + "]");
    mask = to_doubles(m);
  }
  const HostVector<double> xv = to_doubles(*x), wv = to_doubles(*w_t), off = to_doubles(*off_t);
  const int64_t icg = C / group, ocg = OC / group, ico = C / og, plane = OH * OW;
  HostVector<double> out(static_cast<size_t>(N * OC * plane), 0.0);
  ctx.pool().parallel_for(N * OC, [&](int64_t begin, int64_t end) {
    for (int64_t no = begin; no < end; ++no) {
      const int64_t n = no / OC, oc = no % OC, g = oc / ocg;
      double* o = out.data() + no * plane;
      for (int64_t oy = 0; oy < OH; ++oy)
        for (int64_t ox = 0; ox < OW; ++ox) {
          double acc = bias.empty() ? 0.0 : bias[static_cast<size_t>(oc)];
          for (int64_t icl = 0; icl < icg; ++icl) {
            const int64_t ic = g * icg + icl, gi = ic / ico;
            const double* xp = xv.data() + (n * C + ic) * H * W;
            for (int64_t i = 0; i < kh; ++i)
              for (int64_t j = 0; j < kw; ++j) {
                const int64_t tap = i * kw + j;
                const int64_t oi = ((n * og + gi) * taps + tap) * 2;
                const double dy = off[static_cast<size_t>(oi * plane + oy * OW + ox)];
                const double dx = off[static_cast<size_t>((oi + 1) * plane + oy * OW + ox)];
                const double y = static_cast<double>(oy * strides[0] - pads[0] + i * dil[0]) + dy;
                const double xx = static_cast<double>(ox * strides[1] - pads[1] + j * dil[1]) + dx;
                double val = bilinear(xp, H, W, y, xx);
                if (!mask.empty())
                  val *= mask[static_cast<size_t>(((n * og + gi) * taps + tap) * plane + oy * OW +
                                                  ox)];
                acc += val * wv[static_cast<size_t>(((oc * icg + icl) * kh + i) * kw + j)];
              }
          }
          o[oy * OW + ox] = acc;
        }
    }
  });
  ctx.set_output(0, from_doubles(x->dtype(), {N, OC, OH, OW}, out));
  return {};
}

}  // namespace

void register_deform_ops(OpRegistry& r) {
  r.add("Col2Im", col2im);
  r.add("DeformConv", deform_conv);
}

}  // namespace hone::eval::nn
