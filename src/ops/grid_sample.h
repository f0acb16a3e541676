// Where ONNX GridSample reads its input, written once: the grid's normalized
// coordinates mapped to input coordinates (align_corners or not), padded
// (zeros, border, reflection) and interpolated (nearest, linear, cubic) as
// the tensor product of 1-D taps over any number of spatial dims. The
// reference kernel and onednn's own GridSample step (RAFT's correlation
// lookup) both sample with it, in double.
//
//   HONE_TRY(ops::GridSampleAttrs a, ops::grid_sample_attrs(node, opset));
//   ops::GridSampler s(a, {h, w});
//   ops::grid_sample_points(s, n, c, out_plane, x, grid, y, 0, n * out_plane);
#pragma once

#include <cstdint>
#include <vector>

#include "hone/error.h"
#include "hone/graph.h"

namespace hone::ops {

enum class GridMode { kNearest, kLinear, kCubic };
enum class GridPadding { kZeros, kBorder, kReflection };

struct GridSampleAttrs {
  GridMode mode = GridMode::kLinear;
  GridPadding padding = GridPadding::kZeros;
  bool align_corners = false;
};

/// GridSample `n`'s attributes at `opset` (mode 'bilinear'/'bicubic' before
/// opset 20, 'linear'/'cubic' from it; both read); invalid argument naming a
/// mode or padding_mode ONNX does not have.
[[nodiscard]] Result<GridSampleAttrs> grid_sample_attrs(const Node& n, int64_t opset);

/// The sampling of an input of spatial dims `dims` (row-major planes).
class GridSampler {
 public:
  GridSampler(const GridSampleAttrs& a, std::vector<int64_t> dims);
  size_t rank() const { return dims_.size(); }
  /// The taps of one output point whose grid coordinates are g[0..rank)
  /// (innermost dim first, as ONNX lists them): offsets into one input plane
  /// (-1: a padding zero) and their weights.
  /// (grid_sample_taps.h computes them, in C aot's code shares.)
  void taps(const double* g, std::vector<int64_t>* offsets, std::vector<double>* weights) const;

 private:
  GridSampleAttrs a_;
  std::vector<int64_t> dims_;
};

/// Output points [begin, end) of GridSample (point p = batch * out_plane + o)
/// of x [n, c, plane...] by grid [n, out_plane, rank] into y [n, c, out_plane]:
/// every channel of a point from the same taps, summed in double.
template <class T>
void grid_sample_points(const GridSampler& s, int64_t c, int64_t in_plane, int64_t out_plane,
                        const T* x, const T* grid, T* y, int64_t begin, int64_t end) {
  const size_t r = s.rank();
  std::vector<double> g(r), weights;
  std::vector<int64_t> offsets;
  for (int64_t p = begin; p < end; ++p) {
    const int64_t bn = p / out_plane, o = p % out_plane;
    for (size_t d = 0; d < r; ++d)
      g[d] = static_cast<double>(grid[p * static_cast<int64_t>(r) + d]);
    s.taps(g.data(), &offsets, &weights);
    for (int64_t ch = 0; ch < c; ++ch) {
      const T* plane = x + (bn * c + ch) * in_plane;
      double acc = 0.0;
      for (size_t k = 0; k < offsets.size(); ++k)
        if (offsets[k] >= 0) acc += weights[k] * static_cast<double>(plane[offsets[k]]);
      y[(bn * c + ch) * out_plane + o] = static_cast<T>(acc);
    }
  }
}

}  // namespace hone::ops
