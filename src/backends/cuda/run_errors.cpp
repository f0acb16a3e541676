#include "backends/cuda/run_errors.h"

#include <cstring>
#include <string>

#include "backends/cuda/program.h"
#include "hone/shape.h"

namespace hone::cuda {

Error run_error(const Program& program, uint64_t word) {
  const uint64_t kind = word >> 32, step = (word & 0xffffffffu) - 1;
  if ((word & 0xffffffffu) == 0 || step >= program.steps.size())
    return Error(ErrorCode::kInternal, "cuda: a kernel set the run's error word to " +
                                           std::to_string(word) +
                                           ", which names no step of this program (" +
                                           std::to_string(program.steps.size()) + " steps)");
  const Program::Step& st = program.steps[step];
  std::string data;
  if (!st.in.empty()) data = " for data " + shape_to_string(program.slots[st.in[0]].dims);
  if (kind == kRunErrorIndex)
    return Error(ErrorCode::kInvalidArgument,
                 "cuda: " + st.label + ": an index is out of range" + data);
  return Error(ErrorCode::kInternal, "cuda: " + st.label + ": its kernel reported error kind " +
                                         std::to_string(kind) + " [" + st.op.kernel + "]");
}

Result<RunErrors> RunErrors::create(const Driver& d) {
  RunErrors e;
  const uint64_t zero = 0;
  HONE_TRY(e.word_, DeviceBuffer::upload(d, &zero, sizeof zero));
  HONE_TRY(e.seen_, PinnedBuffer::allocate(d, sizeof zero));
  std::memset(e.seen_.data(), 0, sizeof zero);
  return e;
}

Result<void> RunErrors::enqueue_read(const Driver& d, CUstream s) const {
  return d.check(d.api().cuMemcpyDtoHAsync(seen_.data(), word_.ptr(), sizeof(uint64_t), s),
                 "cuMemcpyDtoHAsync");
}

Result<void> RunErrors::check(const Driver& d, CUstream s, const Program& program) {
  uint64_t word = 0;
  std::memcpy(&word, seen_.data(), sizeof word);
  if (word == 0) return {};
  std::memset(seen_.data(), 0, sizeof word);
  HONE_CHECK_OK(clear(d, s));
  return fail(run_error(program, word));
}

Result<void> RunErrors::clear(const Driver& d, CUstream s) const {
  return d.check(d.api().cuMemsetD32Async(word_.ptr(), 0, 2, s), "cuMemsetD32Async");
}

}  // namespace hone::cuda
