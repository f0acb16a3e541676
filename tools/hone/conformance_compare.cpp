#include <algorithm>
#include <cmath>
#include <cstring>
#include <system_error>

#include <fmt/core.h>

#include "cli_common.h"
#include "conformance.h"
#include "hone/shape.h"

namespace hone::cli::conformance {
namespace fs = std::filesystem;

namespace {

bool is_test_dir(const fs::path& d) {
  std::error_code ec;
  if (!fs::is_regular_file(d / "model.onnx", ec)) return false;
  for (const auto& e : fs::directory_iterator(d, ec))
    if (e.is_directory(ec) && e.path().filename().string().starts_with("test_data_set_"))
      return true;
  return false;
}

std::string category_of(const fs::path& test_dir) {
  const fs::path parent = test_dir.parent_path();
  const std::string c = parent.filename().string();
  return c.empty() ? "." : c;
}

std::string index_string(const std::vector<int64_t>& shape, int64_t flat) {
  if (shape.empty()) return "[]";
  std::vector<int64_t> idx(shape.size());
  for (size_t a = shape.size(); a-- > 0;) {
    const int64_t d = std::max<int64_t>(shape[a], 1);
    idx[a] = flat % d;
    flat /= d;
  }
  return shape_to_string(idx);
}

}  // namespace

std::vector<TestCase> discover_tests(const fs::path& root) {
  std::vector<TestCase> tests;
  std::error_code ec;
  const fs::path base = fs::weakly_canonical(root, ec);
  const fs::path start = ec ? root : base;
  if (is_test_dir(start)) {
    tests.push_back({category_of(start), start.filename().string(), start});
    return tests;
  }
  auto it = fs::recursive_directory_iterator(start,
                                             fs::directory_options::skip_permission_denied |
                                                 fs::directory_options::follow_directory_symlink,
                                             ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_directory(ec)) continue;
    const fs::path p = it->path();
    if (p.filename().string().starts_with("test_data_set_")) {
      it.disable_recursion_pending();
      continue;
    }
    if (is_test_dir(p)) {
      tests.push_back({category_of(p), p.filename().string(), p});
      it.disable_recursion_pending();
    }
  }
  std::sort(tests.begin(), tests.end(), [](const TestCase& a, const TestCase& b) {
    return a.category != b.category ? a.category < b.category : a.name < b.name;
  });
  return tests;
}

std::vector<fs::path> data_sets(const fs::path& test_dir) {
  std::vector<std::pair<long, fs::path>> sets;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(test_dir, ec)) {
    const std::string n = e.path().filename().string();
    if (!e.is_directory(ec) || !n.starts_with("test_data_set_")) continue;
    long k = 0;
    try {
      k = std::stol(n.substr(14));
    } catch (...) {
      k = 1L << 30;
    }
    sets.emplace_back(k, e.path());
  }
  std::sort(sets.begin(), sets.end());
  std::vector<fs::path> out;
  for (auto& [k, p] : sets) out.push_back(std::move(p));
  return out;
}

std::optional<std::string> compare_tensors(const Tensor& got, const Tensor& want, Tolerance tol) {
  if (got.dtype() != want.dtype())
    return fmt::format("dtype {}, expected {}", dtype_name(got.dtype()), dtype_name(want.dtype()));
  if (got.shape() != want.shape())
    return fmt::format("shape {}, expected {}", shape_to_string(got.shape()),
                       shape_to_string(want.shape()));
  const int64_t n = want.numel();
  int64_t bad = 0, worst = -1;
  double worst_excess = -1, worst_err = 0, worst_tol = 0;
  if (is_floating(want.dtype())) {
    for (int64_t i = 0; i < n; ++i) {
      const double a = tensor_element_as_double(got, i);
      const double e = tensor_element_as_double(want, i);
      double err = 0, t = 0, excess = 0;
      bool ok = true;
      if (std::isnan(e)) {
        ok = std::isnan(a);
        err = ok ? 0 : INFINITY;
      } else if (std::isinf(e) || std::isinf(a) || std::isnan(a)) {
        ok = a == e;
        err = ok ? 0 : INFINITY;
      } else {
        err = std::fabs(a - e);
        t = tol.atol + tol.rtol * std::fabs(e);
        ok = err <= t;
      }
      if (ok) continue;
      ++bad;
      excess = t > 0 ? err / t : INFINITY;
      if (worst < 0 || excess > worst_excess) {
        worst = i;
        worst_excess = excess;
        worst_err = err;
        worst_tol = t;
      }
    }
    if (bad == 0) return std::nullopt;
    return fmt::format(
        "{} of {} elements differ; worst at {}: got {}, expected {} (|err| {} > tol {})", bad, n,
        index_string(want.shape(), worst), format_number(tensor_element_as_double(got, worst)),
        format_number(tensor_element_as_double(want, worst)), format_number(worst_err),
        format_number(worst_tol));
  }
  // Integers and bools: exact, compared bytewise per element.
  const size_t es = dtype_size(want.dtype());
  const auto* pa = static_cast<const uint8_t*>(got.raw());
  const auto* pe = static_cast<const uint8_t*>(want.raw());
  for (int64_t i = 0; i < n; ++i) {
    if (std::memcmp(pa + i * es, pe + i * es, es) == 0) continue;
    if (bad++ == 0) worst = i;
  }
  if (bad == 0) return std::nullopt;
  auto show = [&](const Tensor& t) {
    return want.dtype() == DType::kU64
               ? std::to_string(reinterpret_cast<const uint64_t*>(t.raw())[worst])
               : std::to_string(tensor_element_as_int64(t, worst));
  };
  return fmt::format("{} of {} elements differ; first at {}: got {}, expected {}", bad, n,
                     index_string(want.shape(), worst), show(got), show(want));
}

std::optional<std::string> compare_values(const RunValue& got, const RunValue& want,
                                          Tolerance tol) {
  using Kind = RunValue::Kind;
  auto kind_name = [](const RunValue& v) {
    return v.kind == Kind::kNone     ? "an empty optional"
           : v.kind == Kind::kTensor ? "a tensor"
                                     : "a sequence";
  };
  if (got.kind != want.kind)
    return fmt::format("got {}, expected {}", kind_name(got), kind_name(want));
  if (want.kind == Kind::kNone) return std::nullopt;
  if (want.kind == Kind::kTensor) return compare_tensors(got.tensor, want.tensor, tol);
  if (got.sequence.size() != want.sequence.size())
    return fmt::format("sequence of {} tensors, expected {}", got.sequence.size(),
                       want.sequence.size());
  for (size_t k = 0; k < want.sequence.size(); ++k)
    if (auto why = compare_tensors(got.sequence[k], want.sequence[k], tol))
      return fmt::format("sequence element {}: {}", k, *why);
  return std::nullopt;
}

}  // namespace hone::cli::conformance
