#include "hone/error.h"

namespace hone {

std::string_view to_string(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return "invalid argument";
    case ErrorCode::kUnsupported:
      return "unsupported";
    case ErrorCode::kUnsupportedHardware:
      return "unsupported on this machine";
    case ErrorCode::kNotFound:
      return "not found";
    case ErrorCode::kCorrupt:
      return "corrupt";
    case ErrorCode::kOutOfMemory:
      return "out of memory";
    case ErrorCode::kFailedPrecondition:
      return "failed precondition";
    case ErrorCode::kIo:
      return "i/o error";
    case ErrorCode::kInternal:
      return "internal error";
  }
  return "unknown error";
}

std::string Error::to_string() const {
  std::string out{hone::to_string(code_)};
  out += ": ";
  out += message_;
  for (const auto& c : context_) {
    out += "\n  ";
    out += c;
  }
  return out;
}

}  // namespace hone
