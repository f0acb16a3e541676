// Private to hone: a <cstdio> FILE in an RAII handle, and errno's text for
// the error that names what failed; shared by the code that reads or writes
// files itself (core/file_io.cpp, core/read_file.cpp, onnx/proto_tensor.cpp).
//
//   StdioFile f(std::fopen(path.c_str(), "rb"));
//   if (!f) return fail(ErrorCode::kIo, "cannot open '" + path.string() + "': " + errno_text());
#pragma once

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

namespace hone {

struct StdioFileCloser {
  void operator()(std::FILE* f) const {
    if (f != nullptr) std::fclose(f);
  }
};
/// Owns the FILE; closes it (ignoring the result) when dropped. Call
/// std::fclose(f.release()) where the close's result matters.
using StdioFile = std::unique_ptr<std::FILE, StdioFileCloser>;

/// The text of errno as it is now: call it before anything that may set errno.
inline std::string errno_text() {
  return std::strerror(errno);
}

}  // namespace hone
