// hone::Error and hone::Result<T>: how every fallible call across a module
// boundary reports failure.
//
//   hone::Result<Graph> g = hone::onnx::load_model("m.onnx");
//   if (!g) std::cerr << g.error().to_string() << "\n";
//   HONE_TRY(auto graph, hone::onnx::load_model(path));   // propagate
//
// An Error has a code, a message a user can act on, and a context chain that
// grows outward as the error travels up ("while running node 'conv1' (Conv)").
#pragma once

#include <expected>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hone {

/// What kind of failure an Error is. kUnsupported means "this backend or
/// component cannot do this configuration"; kUnsupportedHardware means "this
/// machine cannot" (missing CPU feature, no GPU, no compiler).
enum class ErrorCode {
  kInvalidArgument,
  kUnsupported,
  kUnsupportedHardware,
  kNotFound,
  kCorrupt,
  kOutOfMemory,
  kFailedPrecondition,
  kIo,
  kInternal,
};

std::string_view to_string(ErrorCode code);

class Error {
 public:
  Error(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }
  /// Innermost first.
  const std::vector<std::string>& context() const { return context_; }

  /// Adds an outer context line ("while importing node 'conv1' (Conv)").
  Error& add_context(std::string what) & {
    context_.push_back(std::move(what));
    return *this;
  }
  Error&& add_context(std::string what) && {
    context_.push_back(std::move(what));
    return std::move(*this);
  }

  /// "invalid argument: message\n  while ...\n  while ..." (outermost last).
  std::string to_string() const;

 private:
  ErrorCode code_;
  std::string message_;
  std::vector<std::string> context_;
};

template <class T>
using Result = std::expected<T, Error>;

/// Convenience to build a failed Result: `return hone::fail(ErrorCode::kCorrupt, "...")`.
inline std::unexpected<Error> fail(ErrorCode code, std::string message) {
  return std::unexpected<Error>(Error(code, std::move(message)));
}
inline std::unexpected<Error> fail(Error error) {
  return std::unexpected<Error>(std::move(error));
}

}  // namespace hone

#define HONE_CONCAT_INNER_(a, b) a##b
#define HONE_CONCAT_(a, b) HONE_CONCAT_INNER_(a, b)

/// `HONE_TRY(auto x, expr);` evaluates a Result; on error returns it from the
/// enclosing function (whose return type must be a Result), else binds the value.
#define HONE_TRY(lhs, expr) HONE_TRY_IMPL_(HONE_CONCAT_(hone_try_, __LINE__), lhs, expr)
#define HONE_TRY_IMPL_(tmp, lhs, expr)                                  \
  auto tmp = (expr);                                                    \
  if (!tmp.has_value()) return std::unexpected(std::move(tmp).error()); \
  lhs = std::move(*tmp)

/// `HONE_CHECK_OK(expr);` for Result<void> (or any Result whose value is unused).
#define HONE_CHECK_OK(expr)                                                               \
  do {                                                                                    \
    auto hone_check_ = (expr);                                                            \
    if (!hone_check_.has_value()) return std::unexpected(std::move(hone_check_).error()); \
  } while (0)

/// Like HONE_CHECK_OK but adds a context line to the error on the way out.
#define HONE_CHECK_OK_CTX(expr, ctx)                                           \
  do {                                                                         \
    auto hone_check_ = (expr);                                                 \
    if (!hone_check_.has_value())                                              \
      return std::unexpected(std::move(hone_check_).error().add_context(ctx)); \
  } while (0)
