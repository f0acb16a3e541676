// The calibrated gate: a candidate's error against the f64 truth, bounded by
// a factor of the f32 reference's own error (see hone/correctness.h).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <optional>

#include <fmt/core.h>

#include "hone/correctness.h"

namespace hone {

GateTolerance GateTolerance::for_precision(Precision precision) {
  switch (precision) {
    case Precision::kTf32:
    case Precision::kFp16:
      return {100, 2e-3, 2e-2};
    case Precision::kBf16:
      return {100, 2e-2, 1e-1};
    case Precision::kFp8:
      // Derived as the reduced rows are: the floors follow the format's unit
      // roundoff. bf16's (2e-2 / 1e-1) are ~5 and ~25 units of its roundoff
      // 2^-8 = 3.9e-3; e4m3 has 3 explicit mantissa bits to bf16's 7, so its
      // roundoff 2^-4 = 6.25e-2 is 16 times coarser: 16 x 2e-2 = 0.32 and
      // 16 x 1e-1 = 1.6, rounded down to 0.3 / 1.5. Per-tensor scales (amax
      // mapped to e4m3's largest finite value, 448) keep a tensor's values in
      // the normal range, so its rounding, not its range, is what the bound
      // covers. A product by random data in e4m3 lands near 0.035 in relative
      // L2 (both operands rounded: sqrt(2) x ~0.024 RMS relative error), a
      // wrong kernel near 1: an order of magnitude either side.
      return {100, 3e-1, 1.5};
    case Precision::kFp32:
    case Precision::kFp64:
      break;
  }
  return {100, 1e-5, 1e-4};
}

Result<GateTolerance> GateTolerance::parse(std::string_view text) {
  GateTolerance g = for_precision(Precision::kFp32);
  double* fields[] = {&g.factor, &g.floor_rel_l2, &g.floor_max};
  const char* names[] = {"factor", "relative L2 floor", "max|diff|/RMS floor"};
  size_t field = 0, start = 0;
  while (true) {
    const size_t colon = text.find(':', start);
    const std::string part(
        text.substr(start, colon == std::string_view::npos ? text.npos : colon - start));
    if (field >= std::size(fields))
      return fail(ErrorCode::kInvalidArgument,
                  fmt::format("tolerance '{}' has more than 3 parts (FACTOR[:FLOOR_REL_L2[:"
                              "FLOOR_MAX]])",
                              text));
    char* end = nullptr;
    const double v = std::strtod(part.c_str(), &end);
    if (part.empty() || end != part.c_str() + part.size() || !(v > 0) || !std::isfinite(v))
      return fail(ErrorCode::kInvalidArgument,
                  fmt::format("tolerance '{}': the {} '{}' is not a positive number", text,
                              names[field], part));
    *fields[field++] = v;
    if (colon == std::string_view::npos) break;
    start = colon + 1;
  }
  return g;
}

std::string GateTolerance::describe() const {
  return fmt::format("factor {:g}, floors {:g} (relative L2) / {:g} (max|diff|/RMS)", factor,
                     floor_rel_l2, floor_max);
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// RMS of `truth` over its finite elements, and the two errors of `a` on that
/// scale; non-finite truth elements must be matched exactly (NaN by NaN).
struct Errors {
  double rel_l2 = 0, max_err = 0;
  int64_t worst = -1;
  double actual = 0, expected = 0;
  bool nonfinite_mismatch = false;
};

Errors float_errors(const Tensor& a, const Tensor& t) {
  Errors e;
  double sum_t = 0, sum_d = 0, max_d = -1;
  int64_t finite = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double tv = tensor_element_as_double(t, i), av = tensor_element_as_double(a, i);
    if (!std::isfinite(tv)) {
      const bool same = std::isnan(tv) ? std::isnan(av) : av == tv;
      if (!same && !e.nonfinite_mismatch) {
        e.nonfinite_mismatch = true;
        e.worst = i, e.actual = av, e.expected = tv;
      }
      continue;
    }
    ++finite;
    sum_t += tv * tv;
    const double d = std::isfinite(av) ? std::abs(av - tv) : kInf;
    sum_d += d * d;
    if (d > max_d) {
      max_d = d;
      if (!e.nonfinite_mismatch) e.worst = i, e.actual = av, e.expected = tv;
    }
  }
  if (finite == 0) return e;
  // The output's own scale; an all-zero truth is judged on an absolute scale of 1e-30
  // (so any difference fails, which a correct backend does not produce).
  const double rms = std::max(std::sqrt(sum_t / static_cast<double>(finite)), 1e-30);
  e.rel_l2 = std::sqrt(sum_d / static_cast<double>(finite)) / rms;
  e.max_err = std::max(max_d, 0.0) / rms;
  if (std::isnan(e.rel_l2)) e.rel_l2 = kInf;
  if (e.nonfinite_mismatch) e.rel_l2 = e.max_err = kInf;
  return e;
}

CorrectnessResult failed_check(std::string output, std::string message) {
  CorrectnessResult r;
  r.passed = false;
  r.output = std::move(output);
  r.message = std::move(message);
  return r;
}

/// Whether index `got` in place of `want` at element `k` of an index output
/// is a tie: the two values it points at in the witness differ by at most
/// `bound` times the witness's RMS.
class TieJudge {
 public:
  TieJudge(const TieWitness& w, const std::vector<int64_t>& out_shape, double bound)
      : w_(w), bound_(bound) {
    const auto& dims = w.values.shape();
    for (size_t d = 0; d < dims.size(); ++d) {
      if (static_cast<int64_t>(d) < w.axis) outer_ *= dims[d];
      if (static_cast<int64_t>(d) > w.axis) inner_ *= dims[d];
    }
    len_ = dims.empty() ? 1 : dims[static_cast<size_t>(w.axis)];
    k_ = w.along_axis && static_cast<size_t>(w.axis) < out_shape.size()
             ? out_shape[static_cast<size_t>(w.axis)]
             : 1;
    double sum = 0;
    for (int64_t i = 0; i < w.values.numel(); ++i) {
      const double v = tensor_element_as_double(w.values, i);
      if (std::isfinite(v)) sum += v * v;
    }
    rms_ = w.values.numel() > 0 ? std::sqrt(sum / static_cast<double>(w.values.numel())) : 0;
  }

  bool tie(int64_t k, double got, double want) const {
    const int64_t o = k / (k_ * inner_), in = k % inner_;
    auto at = [&](double index) -> std::optional<double> {
      if (!(index >= 0 && index < static_cast<double>(len_))) return std::nullopt;
      const int64_t j = static_cast<int64_t>(index);
      if (o >= outer_) return std::nullopt;
      return tensor_element_as_double(w_.values, (o * len_ + j) * inner_ + in);
    };
    const auto a = at(got), b = at(want);
    return a && b && std::abs(*a - *b) <= bound_ * std::max(rms_, 1e-30);
  }

 private:
  const TieWitness& w_;
  double bound_;
  int64_t outer_ = 1, inner_ = 1, len_ = 1, k_ = 1;
  double rms_ = 0;
};

double excess(const OutputCheck& o) {
  if (o.exact) return o.mismatches > 0 ? kInf : 0;
  return std::max(o.bound_rel_l2 > 0 ? o.rel_l2 / o.bound_rel_l2 : o.rel_l2,
                  o.bound_max_err > 0 ? o.max_err / o.bound_max_err : o.max_err);
}

}  // namespace

CorrectnessResult calibrated_check(const std::vector<Tensor>& candidate,
                                   const std::vector<Tensor>& reference,
                                   const std::vector<Tensor>& truth,
                                   const std::vector<std::string>& names, const GateTolerance& tol,
                                   const std::vector<TieWitness>& ties) {
  if (candidate.size() != reference.size() || truth.size() != reference.size())
    return failed_check(
        "", fmt::format("{} outputs, the reference has {}", candidate.size(), reference.size()));
  CorrectnessResult r;
  r.tolerance = tol.describe();
  double worst_excess = -1;
  for (size_t i = 0; i < reference.size(); ++i) {
    const std::string name =
        i < names.size() && !names[i].empty() ? names[i] : fmt::format("output {}", i);
    const Tensor &a = candidate[i], &ref = reference[i], &t = truth[i];
    if (a.dtype() != ref.dtype())
      return failed_check(name, fmt::format("output '{}' is {}, the reference's is {}", name,
                                            a.describe(), ref.describe()));
    if (a.shape() != ref.shape())
      return failed_check(name, fmt::format("output '{}' has shape {}, the reference's is {}", name,
                                            a.describe(), ref.describe()));
    // A truth of another shape (a data-dependent output such as NonZero that
    // f32 rounding changed) cannot judge this output; the f32 reference does.
    const Tensor& truth_i = t.shape() == ref.shape() ? t : ref;
    OutputCheck o;
    o.output = name;
    int64_t worst = -1;
    double av = 0, ev = 0;
    if (!is_floating(ref.dtype())) {
      o.exact = true;
      std::optional<TieJudge> judge;
      for (const TieWitness& w : ties)
        if (w.output == i && truth_i.shape() == a.shape())
          judge.emplace(w, a.shape(), tol.floor_max);
      for (int64_t k = 0; k < ref.numel(); ++k) {
        const double x = tensor_element_as_double(a, k), y = tensor_element_as_double(truth_i, k);
        if (x == y || x == tensor_element_as_double(ref, k)) continue;
        if (judge && judge->tie(k, x, y)) {
          ++o.tied_flips;
          continue;
        }
        if (o.mismatches++ == 0) worst = k, av = x, ev = y;
      }
      o.passed = o.mismatches == 0;
    } else {
      const Errors c = float_errors(a, truth_i), f = float_errors(ref, truth_i);
      o.rel_l2 = c.rel_l2, o.max_err = c.max_err;
      o.ref_rel_l2 = f.rel_l2, o.ref_max_err = f.max_err;
      o.bound_rel_l2 = std::max(tol.factor * f.rel_l2, tol.floor_rel_l2);
      o.bound_max_err = std::max(tol.factor * f.max_err, tol.floor_max);
      o.passed = o.rel_l2 <= o.bound_rel_l2 && o.max_err <= o.bound_max_err;
      worst = c.worst, av = c.actual, ev = c.expected;
    }
    const double x = o.passed ? excess(o) : kInf;
    if (i == 0 || (!o.passed && r.passed) || (o.passed == r.passed && x > worst_excess)) {
      worst_excess = x;
      r.output = name;
      r.worst_index = worst;
      r.actual = av;
      r.expected = ev;
      r.abs_error = std::abs(av - ev);
      r.rel_error = r.abs_error / std::max(std::abs(ev), 1e-30);
    }
    if (!o.passed && r.passed) {
      r.passed = false;
      if (o.exact)
        r.message = fmt::format(
            "output '{}': {} element(s) differ from the truth and the f32 reference "
            "(first: element {}, {} vs {}; integers must be equal, or for indices point at "
            "values that tie within the bound)",
            name, o.mismatches, worst, av, ev);
      else if (!std::isfinite(o.rel_l2) || !std::isfinite(o.max_err))
        r.message =
            fmt::format("output '{}' element {} is {} where the truth has {}", name, worst, av, ev);
      else
        r.message = fmt::format(
            "output '{}': relative L2 error {:.3g} (bound {:.3g}), max|diff|/RMS {:.3g} (bound "
            "{:.3g}); the f32 reference's are {:.3g} and {:.3g}; worst element {}: {:.9g} vs "
            "{:.9g}",
            name, o.rel_l2, o.bound_rel_l2, o.max_err, o.bound_max_err, o.ref_rel_l2, o.ref_max_err,
            worst, av, ev);
    }
    r.outputs.push_back(std::move(o));
  }
  return r;
}

CorrectnessResult merge_checks(CorrectnessResult a, const CorrectnessResult& b) {
  if (a.outputs.empty()) return b;
  if (b.outputs.empty()) return a;
  CorrectnessResult r = a;
  if (a.passed && !b.passed) {
    r = b;
    r.outputs = a.outputs;
  }
  if (r.outputs.size() == b.outputs.size())
    for (size_t i = 0; i < r.outputs.size(); ++i) {
      OutputCheck& o = r.outputs[i];
      const OutputCheck& n = b.outputs[i];
      const bool passed = o.passed && n.passed;
      const int64_t flips = o.tied_flips + n.tied_flips;
      if (excess(n) > excess(o) || (o.passed && !n.passed)) o = n;
      o.passed = passed;
      o.tied_flips = flips;
    }
  return r;
}

}  // namespace hone
