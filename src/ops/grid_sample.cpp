// ONNX GridSample's sampling (ops/grid_sample.h), in double.
#include "ops/grid_sample.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

namespace hone::ops {
namespace {

double reflect(double x, double lo, double hi) {
  const double range = hi - lo;
  if (range <= 0) return lo;
  if (x < lo) {
    const double dx = lo - x;
    const double k = std::floor(dx / range), rem = dx - k * range;
    return static_cast<int64_t>(k) % 2 == 0 ? lo + rem : hi - rem;
  }
  if (x > hi) {
    const double dx = x - hi;
    const double k = std::floor(dx / range), rem = dx - k * range;
    return static_cast<int64_t>(k) % 2 == 0 ? hi - rem : lo + rem;
  }
  return x;
}

double cubic_weight(double d) {
  const double a = -0.75;
  d = std::abs(d);
  if (d <= 1.0) return ((a + 2.0) * d - (a + 3.0)) * d * d + 1.0;
  if (d < 2.0) return ((a * d - 5.0 * a) * d + 8.0 * a) * d - 4.0 * a;
  return 0.0;
}

}  // namespace

Result<GridSampleAttrs> grid_sample_attrs(const Node& n, int64_t opset) {
  GridSampleAttrs a;
  std::string mode = n.attr_string("mode", opset >= 20 ? "linear" : "bilinear");
  if (mode == "bilinear") mode = "linear";
  if (mode == "bicubic") mode = "cubic";
  if (mode == "linear")
    a.mode = GridMode::kLinear;
  else if (mode == "nearest")
    a.mode = GridMode::kNearest;
  else if (mode == "cubic")
    a.mode = GridMode::kCubic;
  else
    return fail(ErrorCode::kInvalidArgument, "GridSample mode '" + mode + "' is not valid");
  const std::string pad = n.attr_string("padding_mode", "zeros");
  if (pad == "zeros")
    a.padding = GridPadding::kZeros;
  else if (pad == "border")
    a.padding = GridPadding::kBorder;
  else if (pad == "reflection")
    a.padding = GridPadding::kReflection;
  else
    return fail(ErrorCode::kInvalidArgument, "GridSample padding_mode '" + pad + "' is not valid");
  a.align_corners = n.attr_int("align_corners", 0) != 0;
  return a;
}

GridSampler::GridSampler(const GridSampleAttrs& a, std::vector<int64_t> dims)
    : a_(a), dims_(std::move(dims)), stride_(dims_.size(), 1) {
  for (size_t d = dims_.size(); d-- > 1;) stride_[d - 1] = stride_[d] * dims_[d];
}

/// Grid value in [-1, 1] -> input coordinate along d, padded when out of range.
double GridSampler::coord(double g, size_t d) const {
  const double s = static_cast<double>(dims_[d]);
  const double lo = a_.align_corners ? 0.0 : -0.5, hi = a_.align_corners ? s - 1.0 : s - 0.5;
  double x = a_.align_corners ? (g + 1.0) / 2.0 * (s - 1.0) : ((g + 1.0) * s - 1.0) / 2.0;
  if (x < lo || x > hi) {
    if (a_.padding == GridPadding::kBorder) x = std::clamp(x, 0.0, s - 1.0);
    if (a_.padding == GridPadding::kReflection) x = reflect(x, lo, hi);
  }
  return x;
}

/// Integer index along d after padding, or -1 for a zero.
int64_t GridSampler::index(int64_t i, size_t d) const {
  if (i >= 0 && i < dims_[d]) return i;
  if (a_.padding == GridPadding::kZeros) return -1;
  if (a_.padding == GridPadding::kBorder) return std::clamp<int64_t>(i, 0, dims_[d] - 1);
  const double s = static_cast<double>(dims_[d]);
  const double r = reflect(static_cast<double>(i), a_.align_corners ? 0.0 : -0.5,
                           a_.align_corners ? s - 1.0 : s - 0.5);
  return std::clamp<int64_t>(static_cast<int64_t>(std::llround(r)), 0, dims_[d] - 1);
}

void GridSampler::taps(const double* g, std::vector<int64_t>* offsets,
                       std::vector<double>* weights) const {
  const size_t r = dims_.size();
  offsets->assign(1, 0);
  weights->assign(1, 1.0);
  std::vector<int64_t> nt;
  std::vector<double> nw;
  for (size_t d = 0; d < r; ++d) {
    const double pos = coord(g[r - 1 - d], d);  // the grid lists x (innermost) first
    nt.clear();
    nw.clear();
    auto add = [&](int64_t i, double w) {
      const int64_t idx = index(i, d);
      for (size_t k = 0; k < offsets->size(); ++k) {
        nt.push_back(idx < 0 || (*offsets)[k] < 0 ? -1 : (*offsets)[k] + idx * stride_[d]);
        nw.push_back((*weights)[k] * w);
      }
    };
    if (a_.mode == GridMode::kNearest) {
      add(static_cast<int64_t>(std::nearbyint(pos)), 1.0);
    } else {
      const double f = std::floor(pos), t = pos - f;
      const auto i0 = static_cast<int64_t>(f);
      if (a_.mode == GridMode::kLinear) {
        add(i0, 1.0 - t);
        add(i0 + 1, t);
      } else {
        for (int64_t j = -1; j <= 2; ++j) add(i0 + j, cubic_weight(static_cast<double>(j) - t));
      }
    }
    offsets->swap(nt);
    weights->swap(nw);
  }
}

}  // namespace hone::ops
