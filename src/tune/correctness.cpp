#include "hone/correctness.h"

#include <cmath>
#include <limits>

#include <fmt/core.h>

namespace hone {

Tolerance Tolerance::for_precision(Precision precision) {
  switch (precision) {
    case Precision::kTf32:
      return {1e-3, 1e-4};
    case Precision::kBf16:
      return {2e-2, 1e-2};
    case Precision::kFp16:
      return {1e-2, 1e-3};
    case Precision::kFp8:
      // bf16's row scaled by the ratio of the formats' unit roundoffs: e4m3
      // keeps 3 explicit mantissa bits to bf16's 7, so its rounding is 2^4 =
      // 16 times coarser (2^-4 against 2^-8): 16 x 2e-2 = 0.32 and 16 x 1e-2 =
      // 0.16, rounded down to 0.3 / 0.15.
      return {3e-1, 1.5e-1};
    case Precision::kFp32:
    case Precision::kFp64:
      break;
  }
  return {1e-4, 1e-5};
}

namespace {

CorrectnessResult failure(std::string output, std::string message) {
  CorrectnessResult r;
  r.passed = false;
  r.output = std::move(output);
  r.message = std::move(message);
  return r;
}

/// Compares one output. `excess` is how far past the tolerance the worst element is.
CorrectnessResult compare_one(const Tensor& a, const Tensor& e, const std::string& name,
                              const Tolerance& tol, double* excess_out) {
  *excess_out = -std::numeric_limits<double>::infinity();
  if (a.dtype() != e.dtype())
    return failure(name, fmt::format("output '{}' is {}, the reference's is {}", name, a.describe(),
                                     e.describe()));
  if (a.shape() != e.shape())
    return failure(name, fmt::format("output '{}' has shape {}, the reference's is {}", name,
                                     a.describe(), e.describe()));
  CorrectnessResult r;
  r.output = name;
  const bool floating = is_floating(e.dtype());
  double worst_excess = -std::numeric_limits<double>::infinity();
  for (int64_t i = 0; i < e.numel(); ++i) {
    const double av = tensor_element_as_double(a, i), ev = tensor_element_as_double(e, i);
    double excess;
    if (!floating) {
      excess = av == ev ? -1.0 : std::abs(av - ev);
    } else if (std::isnan(ev) || std::isinf(ev)) {
      // Same non-finite value as the reference (NaN matches NaN, inf must be equal).
      const bool same = std::isnan(ev) ? std::isnan(av) : av == ev;
      excess = same ? -1.0 : std::numeric_limits<double>::infinity();
    } else if (!std::isfinite(av)) {
      excess = std::numeric_limits<double>::infinity();  // NaN/Inf where the reference has none
    } else {
      excess = std::abs(av - ev) - (tol.atol + tol.rtol * std::abs(ev));
    }
    if (excess > worst_excess) {
      worst_excess = excess;
      r.worst_index = i;
      r.actual = av;
      r.expected = ev;
    }
  }
  if (r.worst_index >= 0) {
    r.abs_error = std::abs(r.actual - r.expected);
    if (std::isnan(r.abs_error)) r.abs_error = std::numeric_limits<double>::infinity();
    r.rel_error = r.abs_error / std::max(std::abs(r.expected), 1e-30);
  }
  *excess_out = worst_excess;
  if (worst_excess > 0) {
    r.passed = false;
    if (!std::isfinite(r.actual) && std::isfinite(r.expected))
      r.message = fmt::format("output '{}' element {} is {} where the reference has {}", name,
                              r.worst_index, r.actual, r.expected);
    else if (!floating)
      r.message = fmt::format("output '{}' element {}: {} vs reference {} (integers must be equal)",
                              name, r.worst_index, r.actual, r.expected);
    else
      r.message = fmt::format(
          "output '{}' element {}: {:.9g} vs reference {:.9g} (|diff| {:.3g}, relative {:.3g}; "
          "allowed atol {:g} + rtol {:g} * |ref|)",
          name, r.worst_index, r.actual, r.expected, r.abs_error, r.rel_error, tol.atol, tol.rtol);
  }
  return r;
}

}  // namespace

CorrectnessResult check_outputs(const std::vector<Tensor>& actual,
                                const std::vector<Tensor>& expected,
                                const std::vector<std::string>& names, const Tolerance& tolerance) {
  if (actual.size() != expected.size())
    return failure("",
                   fmt::format("{} outputs, the reference has {}", actual.size(), expected.size()));
  CorrectnessResult worst;
  double worst_excess = -std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < expected.size(); ++i) {
    const std::string name =
        i < names.size() && !names[i].empty() ? names[i] : fmt::format("output {}", i);
    double excess = 0;
    CorrectnessResult r = compare_one(actual[i], expected[i], name, tolerance, &excess);
    if (!r.passed && r.worst_index < 0) return r;  // dtype or shape mismatch
    if (i == 0 || excess > worst_excess) {
      worst = r;
      worst_excess = excess;
    }
  }
  return worst;
}

CorrectnessResult worse_of(CorrectnessResult a, CorrectnessResult b) {
  if (a.passed != b.passed) return a.passed ? b : a;
  if (a.worst_index < 0) return b;
  if (b.worst_index < 0) return a;
  return b.rel_error > a.rel_error ? b : a;
}

}  // namespace hone
