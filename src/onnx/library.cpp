#include "onnx/library.h"

#include <onnx/common/version.h>

namespace hone::onnx {

std::string library_version() {
  return ::ONNX_NAMESPACE::LAST_RELEASE_VERSION;
}

}  // namespace hone::onnx
