// The MPI transport: MPI_Init_thread (funneled: only the thread that called
// tune talks to MPI), non-blocking all-gathers polled against a deadline so
// no rank waits forever, MPI_Finalize when the last transport goes.
#include <mpi.h>

#include <chrono>
#include <thread>

#include <fmt/core.h>

#include "dist/transport.h"

namespace hone::dist {
namespace {

std::string mpi_error(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) return fmt::format("MPI error {}", code);
  return std::string(text, static_cast<size_t>(len));
}

/// Polls `req` until done or `deadline`; false on timeout (the request is
/// left pending: a collective cannot be cancelled).
bool wait_until(MPI_Request& req, std::chrono::steady_clock::time_point deadline, int& rc) {
  auto pause = std::chrono::microseconds(50);
  for (;;) {
    int done = 0;
    rc = MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS || done) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(pause);
    // Tuning steps take seconds: back off to 10 ms so a waiting rank does
    // not steal a core from the ranks still measuring.
    pause = std::min<std::chrono::microseconds>(pause * 2, std::chrono::milliseconds(10));
  }
}

class MpiTransport final : public Transport {
 public:
  MpiTransport(int rank, int size) : rank_(rank), size_(size) {}
  ~MpiTransport() override {
    // After a timeout a collective is still pending; MPI_Finalize would wait
    // for it. Exiting without finalizing makes mpirun end the job instead.
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!wedged_ && !finalized) MPI_Finalize();
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  Result<std::vector<std::string>> all_gather(const std::string& mine, double timeout_s) override {
    if (wedged_)
      return fail(ErrorCode::kFailedPrecondition,
                  "an earlier exchange between the ranks timed out; no more are possible");
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                              std::chrono::duration<double>(timeout_s));
    auto timed_out = [&] {
      wedged_ = true;
      return fail(ErrorCode::kFailedPrecondition,
                  fmt::format("rank {}: not every rank reached this step within {:g} s (one is "
                              "stuck or gone; --dist-timeout sets the limit)",
                              rank_, timeout_s));
    };
    // Sizes first, then the bytes.
    long long len = static_cast<long long>(mine.size());
    std::vector<long long> lens(static_cast<size_t>(size_));
    MPI_Request req;
    int rc =
        MPI_Iallgather(&len, 1, MPI_LONG_LONG, lens.data(), 1, MPI_LONG_LONG, MPI_COMM_WORLD, &req);
    if (rc != MPI_SUCCESS) return fail(ErrorCode::kInternal, "MPI_Iallgather: " + mpi_error(rc));
    if (!wait_until(req, deadline, rc)) return timed_out();
    if (rc != MPI_SUCCESS) return fail(ErrorCode::kInternal, "MPI_Iallgather: " + mpi_error(rc));
    std::vector<int> counts(static_cast<size_t>(size_)), displs(static_cast<size_t>(size_));
    long long total = 0;
    for (int r = 0; r < size_; ++r) {
      if (lens[static_cast<size_t>(r)] < 0 || total + lens[static_cast<size_t>(r)] > (1LL << 30))
        return fail(ErrorCode::kInternal,
                    fmt::format("rank {} sent {} bytes; at most 1 GiB in all is allowed", r,
                                lens[static_cast<size_t>(r)]));
      counts[static_cast<size_t>(r)] = static_cast<int>(lens[static_cast<size_t>(r)]);
      displs[static_cast<size_t>(r)] = static_cast<int>(total);
      total += lens[static_cast<size_t>(r)];
    }
    std::string all(static_cast<size_t>(total), '\0');
    rc = MPI_Iallgatherv(mine.data(), static_cast<int>(mine.size()), MPI_CHAR, all.data(),
                         counts.data(), displs.data(), MPI_CHAR, MPI_COMM_WORLD, &req);
    if (rc != MPI_SUCCESS) return fail(ErrorCode::kInternal, "MPI_Iallgatherv: " + mpi_error(rc));
    if (!wait_until(req, deadline, rc)) return timed_out();
    if (rc != MPI_SUCCESS) return fail(ErrorCode::kInternal, "MPI_Iallgatherv: " + mpi_error(rc));
    std::vector<std::string> out;
    for (int r = 0; r < size_; ++r)
      out.push_back(all.substr(static_cast<size_t>(displs[static_cast<size_t>(r)]),
                               static_cast<size_t>(counts[static_cast<size_t>(r)])));
    return out;
  }

 private:
  int rank_, size_;
  bool wedged_ = false;
};

}  // namespace

std::string mpi_library() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  // Allowed before MPI_Init.
  if (MPI_Get_library_version(text, &len) != MPI_SUCCESS) return "MPI";
  std::string s(text, static_cast<size_t>(len));
  if (auto comma = s.find(','); comma != std::string::npos) s.resize(comma);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\0')) s.pop_back();
  return s;
}

std::string mpi_unavailable_reason() {
  return "";
}

Result<std::unique_ptr<Transport>> open_mpi() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    if (int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
        rc != MPI_SUCCESS)
      return fail(ErrorCode::kInternal, "MPI_Init_thread failed: " + mpi_error(rc));
    // Errors come back as codes, to become hone errors, not abort the job.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  }
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return std::unique_ptr<Transport>(new MpiTransport(rank, size));
}

}  // namespace hone::dist
