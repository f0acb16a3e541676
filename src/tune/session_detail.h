// Private to the tuning session (session.cpp, session_cache.cpp,
// session_batch.cpp): the helpers its parts share.
#pragma once

#include <exception>
#include <new>
#include <string>
#include <vector>

#include "hone/error.h"
#include "hone/tensor.h"

namespace hone::tune_internal {

/// "f32[1, 3] f32[2]": the shapes of a set of inputs, for keys and logs.
inline std::string shapes_text(const std::vector<Tensor>& ts) {
  std::string s;
  for (const Tensor& t : ts) s += (s.empty() ? "" : " ") + t.describe();
  return s;
}

/// A backend call that throws (bad_alloc, a library's exception) becomes an
/// error of the candidate instead of ending the process.
template <class F>
auto guarded(const std::string& what, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return fail(ErrorCode::kOutOfMemory, what + ": out of memory");
  } catch (const std::exception& e) {
    return fail(ErrorCode::kInternal, what + " threw: " + e.what());
  }
}

}  // namespace hone::tune_internal
