// Reference signal ops (opset 17): DFT, STFT, MelWeightMatrix and the
// Hann/Hamming/Blackman windows. Transforms are the naive O(n²) DFT in
// double with an exact twiddle table (angle index j·k mod n).
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "eval/ops.h"
#include "eval/ops_linalg_internal.h"
#include "hone/shape.h"
#include "ops/axis.h"

namespace hone::eval {
namespace {

// The output_datatype attribute as a DType; the error names the op and attribute.
Result<DType> output_datatype(const KernelContext& ctx, const char* op) {
  auto dt = dtype_from_onnx(ctx.node().attr_int("output_datatype", 1));
  if (!dt)
    return fail(dt.error().code(), std::string(op) + " output_datatype: " + dt.error().message());
  return dt;
}

Result<int64_t> scalar_int(const Tensor& t, const char* what) {
  if (!is_integer(t.dtype()) || t.numel() != 1 || t.rank() > 1)
    return fail(ErrorCode::kInvalidArgument,
                std::string(what) + " must be an integer scalar, got " + t.describe());
  return tensor_element_as_int64(t, 0);
}

Result<double> scalar_real(const Tensor& t, const char* what) {
  if (t.numel() != 1 || t.rank() > 1 || t.dtype() == DType::kBool)
    return fail(ErrorCode::kInvalidArgument,
                std::string(what) + " must be a numeric scalar, got " + t.describe());
  return tensor_element_as_double(t, 0);
}

// Forward or inverse DFT of length n of (re, im), writing `bins` outputs.
struct Dft {
  explicit Dft(int64_t n) : n_(n), cos_(static_cast<size_t>(n)), sin_(static_cast<size_t>(n)) {
    for (int64_t m = 0; m < n; ++m) {
      const double a = 2.0 * std::numbers::pi * static_cast<double>(m) / static_cast<double>(n);
      cos_[static_cast<size_t>(m)] = std::cos(a);
      sin_[static_cast<size_t>(m)] = std::sin(a);
    }
  }
  void run(const double* re, const double* im, int64_t bins, bool inverse, double* out_re,
           double* out_im) const {
    const double sign = inverse ? 1.0 : -1.0;
    const double scale = inverse ? 1.0 / static_cast<double>(n_) : 1.0;
    for (int64_t k = 0; k < bins; ++k) {
      double sr = 0.0, si = 0.0;
      int64_t m = 0;  // j·k mod n, advanced incrementally
      for (int64_t j = 0; j < n_; ++j) {
        const double c = cos_[static_cast<size_t>(m)], s = sign * sin_[static_cast<size_t>(m)];
        sr += re[j] * c - im[j] * s;
        si += re[j] * s + im[j] * c;
        m += k;
        if (m >= n_) m %= n_;
      }
      out_re[k] = sr * scale;
      out_im[k] = si * scale;
    }
  }
  int64_t n_;
  HostVector<double> cos_, sin_;
};

Result<void> dft(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  const Node& node = ctx.node();
  const int64_t rank = static_cast<int64_t>(x->rank());
  if (rank < 2 || (x->dim(x->rank() - 1) != 1 && x->dim(x->rank() - 1) != 2))
    return fail(ErrorCode::kInvalidArgument,
                "DFT input must be [batch, ..., 1 or 2], got " + x->describe());
  int64_t axis;
  if (ctx.has_input(2)) {
    HONE_TRY(axis, scalar_int(ctx.input(2), "DFT axis"));
  } else {
    axis = node.attr_int("axis", ctx.opset() >= 20 ? -2 : 1);
  }
  axis = ops::try_normalize_axis(axis, rank).value_or(-1);
  if (axis < 0 || axis > rank - 2)
    return fail(ErrorCode::kInvalidArgument, "DFT axis is out of range for input " + x->describe() +
                                                 " (the last axis holds real/imaginary parts)");
  const bool inverse = node.attr_int("inverse", 0) != 0;
  const bool onesided = node.attr_int("onesided", 0) != 0;
  if (inverse && onesided)
    return fail(ErrorCode::kUnsupported, "DFT with both inverse and onesided is not supported");
  const int64_t len = x->dim(static_cast<size_t>(axis));
  int64_t n = len;
  if (ctx.has_input(1)) {
    HONE_TRY(n, scalar_int(ctx.input(1), "DFT dft_length"));
    if (n <= 0)
      return fail(ErrorCode::kInvalidArgument,
                  "DFT dft_length must be positive, got " + std::to_string(n));
  }
  if (n == 0)
    return fail(ErrorCode::kInvalidArgument, "DFT over an empty axis of " + x->describe());
  const int64_t bins = onesided ? n / 2 + 1 : n;
  const int64_t comp = x->dim(x->rank() - 1);
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < rank - 1; ++i) {
    if (i < axis) outer *= x->dim(static_cast<size_t>(i));
    if (i > axis) inner *= x->dim(static_cast<size_t>(i));
  }
  std::vector<int64_t> out_shape = x->shape();
  out_shape[static_cast<size_t>(axis)] = bins;
  out_shape.back() = 2;
  Tensor out = Tensor::zeros(x->dtype(), out_shape);
  const Dft plan(n);
  HONE_CHECK_OK(dispatch_float(x->dtype(), [&]<class T>() -> Result<void> {
    const T* in = x->data<T>();
    T* o = out.data<T>();
    HostVector<double> re(static_cast<size_t>(n)), im(static_cast<size_t>(n));
    HostVector<double> ore(static_cast<size_t>(bins)), oim(static_cast<size_t>(bins));
    for (int64_t a = 0; a < outer; ++a) {
      for (int64_t b = 0; b < inner; ++b) {
        for (int64_t j = 0; j < n; ++j) {
          const bool inside = j < len;
          const int64_t at = ((a * len + j) * inner + b) * comp;
          re[static_cast<size_t>(j)] = inside ? to_f64(in[at]) : 0.0;
          im[static_cast<size_t>(j)] = inside && comp == 2 ? to_f64(in[at + 1]) : 0.0;
        }
        plan.run(re.data(), im.data(), bins, inverse, ore.data(), oim.data());
        for (int64_t k = 0; k < bins; ++k) {
          const int64_t at = ((a * bins + k) * inner + b) * 2;
          o[at] = from_f64<T>(ore[static_cast<size_t>(k)]);
          o[at + 1] = from_f64<T>(oim[static_cast<size_t>(k)]);
        }
      }
    }
    return {};
  }));
  ctx.set_output(0, std::move(out));
  return {};
}

Result<void> stft(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  HONE_TRY(const Tensor* step_t, ctx.tensor(1));
  HONE_TRY(int64_t step, scalar_int(*step_t, "STFT frame_step"));
  if (x->rank() != 3 || (x->dim(2) != 1 && x->dim(2) != 2))
    return fail(ErrorCode::kInvalidArgument,
                "STFT signal must be [batch, length, 1 or 2], got " + x->describe());
  if (step <= 0)
    return fail(ErrorCode::kInvalidArgument,
                "STFT frame_step must be positive, got " + std::to_string(step));
  const Tensor* window = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  int64_t frame_length = -1;
  if (window) {
    if (window->rank() != 1)
      return fail(ErrorCode::kInvalidArgument,
                  "STFT window must be 1-D, got " + window->describe());
    frame_length = window->dim(0);
  }
  if (ctx.has_input(3)) {
    HONE_TRY(int64_t fl, scalar_int(ctx.input(3), "STFT frame_length"));
    if (window && fl != frame_length)
      return fail(ErrorCode::kInvalidArgument, "STFT frame_length " + std::to_string(fl) +
                                                   " differs from the window length " +
                                                   std::to_string(frame_length));
    frame_length = fl;
  }
  if (frame_length <= 0)
    return fail(
        ErrorCode::kInvalidArgument,
        "STFT needs a window or a positive frame_length, got " + std::to_string(frame_length));
  const int64_t batch = x->dim(0), length = x->dim(1), comp = x->dim(2);
  if (frame_length > length)
    return fail(ErrorCode::kInvalidArgument, "STFT frame_length " + std::to_string(frame_length) +
                                                 " exceeds the signal length " +
                                                 std::to_string(length));
  const bool onesided = ctx.node().attr_int("onesided", 1) != 0;
  const int64_t frames = (length - frame_length) / step + 1;
  const int64_t bins = onesided ? frame_length / 2 + 1 : frame_length;
  const HostVector<double> w =
      window ? to_doubles(*window) : HostVector<double>(static_cast<size_t>(frame_length), 1.0);
  Tensor out = Tensor::zeros(x->dtype(), {batch, frames, bins, 2});
  const Dft plan(frame_length);
  HONE_CHECK_OK(dispatch_float(x->dtype(), [&]<class T>() -> Result<void> {
    const T* in = x->data<T>();
    T* o = out.data<T>();
    HostVector<double> re(static_cast<size_t>(frame_length)), im(static_cast<size_t>(frame_length));
    HostVector<double> ore(static_cast<size_t>(bins)), oim(static_cast<size_t>(bins));
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t f = 0; f < frames; ++f) {
        for (int64_t j = 0; j < frame_length; ++j) {
          const int64_t at = (b * length + f * step + j) * comp;
          re[static_cast<size_t>(j)] = to_f64(in[at]) * w[static_cast<size_t>(j)];
          im[static_cast<size_t>(j)] =
              comp == 2 ? to_f64(in[at + 1]) * w[static_cast<size_t>(j)] : 0.0;
        }
        plan.run(re.data(), im.data(), bins, false, ore.data(), oim.data());
        for (int64_t k = 0; k < bins; ++k) {
          const int64_t at = ((b * frames + f) * bins + k) * 2;
          o[at] = from_f64<T>(ore[static_cast<size_t>(k)]);
          o[at + 1] = from_f64<T>(oim[static_cast<size_t>(k)]);
        }
      }
    }
    return {};
  }));
  ctx.set_output(0, std::move(out));
  return {};
}

Result<void> mel_weight_matrix(KernelContext& ctx) {
  for (size_t i = 0; i < 5; ++i)
    if (!ctx.has_input(i))
      return fail(ErrorCode::kInvalidArgument,
                  "MelWeightMatrix needs 5 inputs (num_mel_bins, dft_length, sample_rate, "
                  "lower_edge_hertz, upper_edge_hertz); input " +
                      std::to_string(i) + " is missing");
  HONE_TRY(int64_t mel_bins, scalar_int(ctx.input(0), "MelWeightMatrix num_mel_bins"));
  HONE_TRY(int64_t dft_length, scalar_int(ctx.input(1), "MelWeightMatrix dft_length"));
  HONE_TRY(int64_t sample_rate, scalar_int(ctx.input(2), "MelWeightMatrix sample_rate"));
  HONE_TRY(double lower, scalar_real(ctx.input(3), "MelWeightMatrix lower_edge_hertz"));
  HONE_TRY(double upper, scalar_real(ctx.input(4), "MelWeightMatrix upper_edge_hertz"));
  HONE_TRY(DType dtype, output_datatype(ctx, "MelWeightMatrix"));
  if (mel_bins <= 0 || dft_length <= 0 || sample_rate <= 0)
    return fail(ErrorCode::kInvalidArgument,
                "MelWeightMatrix num_mel_bins, dft_length and sample_rate must be positive, got " +
                    std::to_string(mel_bins) + ", " + std::to_string(dft_length) + ", " +
                    std::to_string(sample_rate));
  const int64_t spec_bins = dft_length / 2 + 1;
  // Band edges: num_mel_bins + 2 points, evenly spaced on the mel scale with
  // step (high - low) / (num_mel_bins + 2) as the ONNX definition has it,
  // mapped back to Hz and then to a DFT bin index floor((dft_length+1)·f/sr).
  auto mel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
  const double low_mel = mel(lower), high_mel = mel(upper);
  const double step = (high_mel - low_mel) / static_cast<double>(mel_bins + 2);
  std::vector<int64_t> edge(static_cast<size_t>(mel_bins + 2));
  for (int64_t i = 0; i < mel_bins + 2; ++i) {
    const double hz =
        700.0 * (std::pow(10.0, (static_cast<double>(i) * step + low_mel) / 2595.0) - 1.0);
    edge[static_cast<size_t>(i)] = static_cast<int64_t>(
        std::floor(static_cast<double>(dft_length + 1) * hz / static_cast<double>(sample_rate)));
  }
  HostVector<double> w(static_cast<size_t>(spec_bins * mel_bins), 0.0);
  auto set = [&](int64_t row, int64_t col, double v) -> Result<void> {
    if (row < 0 || row >= spec_bins)
      return fail(ErrorCode::kInvalidArgument,
                  "MelWeightMatrix band edge bin " + std::to_string(row) + " is outside [0, " +
                      std::to_string(spec_bins) +
                      "); check the edge frequencies against sample_rate");
    w[static_cast<size_t>(row * mel_bins + col)] = v;
    return {};
  };
  for (int64_t i = 0; i < mel_bins; ++i) {
    const int64_t lo = edge[static_cast<size_t>(i)], mid = edge[static_cast<size_t>(i + 1)],
                  hi = edge[static_cast<size_t>(i + 2)];
    if (mid == lo) {
      HONE_CHECK_OK(set(mid, i, 1.0));
    } else {
      for (int64_t j = lo; j <= mid; ++j)
        HONE_CHECK_OK(set(j, i, static_cast<double>(j - lo) / static_cast<double>(mid - lo)));
    }
    for (int64_t j = mid; j < hi; ++j)
      HONE_CHECK_OK(set(j, i, static_cast<double>(hi - j) / static_cast<double>(hi - mid)));
  }
  ctx.set_output(0, from_doubles(dtype, {spec_bins, mel_bins}, w));
  return {};
}

enum class WindowKind { kHann, kHamming, kBlackman };

Result<void> window(KernelContext& ctx, WindowKind kind, const char* op) {
  HONE_TRY(const Tensor* size_t_, ctx.tensor(0));
  HONE_TRY(int64_t size, scalar_int(*size_t_, (std::string(op) + " size").c_str()));
  if (size < 0)
    return fail(ErrorCode::kInvalidArgument,
                std::string(op) + " size must be >= 0, got " + std::to_string(size));
  HONE_TRY(DType dtype, output_datatype(ctx, op));
  const bool periodic = ctx.node().attr_int("periodic", 1) != 0;
  const double denom = static_cast<double>(periodic ? size : size - 1);
  // allocate() first, so an absurd size is an error rather than a crash.
  HONE_TRY(Tensor out, Tensor::allocate(dtype, {size}));
  constexpr double kAlpha = 25.0 / 46.0;
  HONE_CHECK_OK(dispatch_all(dtype, [&]<class T>() -> Result<void> {
    T* o = out.data<T>();
    for (int64_t i = 0; i < size; ++i) {
      // A one-point symmetric window has no period; it is the single peak 1.
      const double t = 2.0 * std::numbers::pi * static_cast<double>(i) / denom;
      double v = 1.0;
      if (denom > 0) {
        switch (kind) {
          case WindowKind::kHann:
            v = 0.5 - 0.5 * std::cos(t);
            break;
          case WindowKind::kHamming:
            v = kAlpha - (1.0 - kAlpha) * std::cos(t);
            break;
          case WindowKind::kBlackman:
            v = 0.42 - 0.5 * std::cos(t) + 0.08 * std::cos(2.0 * t);
            break;
        }
      }
      o[i] = from_f64<T>(v);
    }
    return {};
  }));
  ctx.set_output(0, std::move(out));
  return {};
}

}  // namespace

void register_linalg_signal_ops(OpRegistry& r) {
  r.add("DFT", dft);
  r.add("STFT", stft);
  r.add("MelWeightMatrix", mel_weight_matrix);
  r.add("HannWindow",
        [](KernelContext& ctx) { return window(ctx, WindowKind::kHann, "HannWindow"); });
  r.add("HammingWindow",
        [](KernelContext& ctx) { return window(ctx, WindowKind::kHamming, "HammingWindow"); });
  r.add("BlackmanWindow",
        [](KernelContext& ctx) { return window(ctx, WindowKind::kBlackman, "BlackmanWindow"); });
}

}  // namespace hone::eval
