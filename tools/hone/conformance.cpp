// `hone conformance DIR`: runs the ONNX backend tests (model.onnx plus
// test_data_set_*/input_K.pb and output_K.pb) found under DIR on a backend,
// and reports passes, failures (with the worst element) and skips.
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/core.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "cli_common.h"
#include "conformance.h"
#include "hone/onnx.h"
#include "hone/reference.h"
#include "hone/registry.h"

namespace hone::cli {
namespace {

namespace fs = std::filesystem;
using conformance::TestCase;
using RuntimeValue = RunValue;

struct ConformanceOptions {
  std::string dir;
  std::string backend = hone::kReferenceBackend;
  std::string tsv;
  std::string filter;
  double rtol = 1e-3;
  double atol = 1e-7;
  int jobs = 1;
  std::optional<int64_t> min_pass;
  bool verbose = false;
  bool isolate = true;  // each test in its own process: a crash or hang fails only that test
  double timeout_s = 300;
};

enum class Status { kPass, kFail, kSkip };

struct Outcome {
  Status status = Status::kPass;
  std::string reason;
};

Outcome pass() {
  return {Status::kPass, ""};
}
Outcome failed(std::string why) {
  return {Status::kFail, std::move(why)};
}
Outcome skipped(std::string why) {
  return {Status::kSkip, std::move(why)};
}

/// The whole error on one line: "code: message; while ...; while ...".
std::string one_line(const Error& e) {
  std::string s = e.to_string();
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\n') {
      out += ";";
      while (i + 1 < s.size() && s[i + 1] == ' ') ++i;
      out += ' ';
    } else if (s[i] == '\t') {
      out += ' ';
    } else {
      out += s[i];
    }
  }
  return out;
}

bool contains_ci(std::string_view hay, std::string_view needle) {
  auto lower = [](char c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c); };
  if (needle.size() > hay.size()) return false;
  for (size_t i = 0; i + needle.size() <= hay.size(); ++i) {
    size_t k = 0;
    while (k < needle.size() && lower(hay[i + k]) == lower(needle[k])) ++k;
    if (k == needle.size()) return true;
  }
  return false;
}

bool file_contains(const fs::path& p, std::string_view needle) {
  std::ifstream in(p, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return bytes.find(needle) != std::string::npos;
}

constexpr std::string_view kTrainingDomain = "ai.onnx.preview.training";

bool is_random_op(const std::string& op) {
  return op == "Bernoulli" || op == "RandomNormal" || op == "RandomNormalLike" ||
         op == "RandomUniform" || op == "RandomUniformLike" || op == "Multinomial";
}

/// A reason to skip a graph (and its subgraphs), or nullopt.
std::optional<std::string> skip_reason(const Graph& g) {
  for (const Node& n : g.nodes()) {
    if (n.domain == kTrainingDomain)
      return fmt::format("training-only op {} (domain {})", n.op_type, kTrainingDomain);
    if (is_random_op(n.op_type) && (n.domain.empty() || n.domain == "ai.onnx"))
      return fmt::format("random op {}: its outputs cannot be compared", n.op_type);
    for (const auto& [key, attr] : n.attrs) {
      if (const auto* sub = std::get_if<std::shared_ptr<const Graph>>(&attr)) {
        if (*sub)
          if (auto r = skip_reason(**sub)) return r;
      } else if (const auto* subs = std::get_if<std::vector<std::shared_ptr<const Graph>>>(&attr)) {
        for (const auto& s : *subs)
          if (s)
            if (auto r = skip_reason(*s)) return r;
      }
    }
  }
  return std::nullopt;
}

bool is_string_error(const Error& e) {
  return e.code() == ErrorCode::kUnsupported && contains_ci(e.message(), "string");
}

RuntimeValue to_runtime(hone::onnx::DataValue dv) {
  using Kind = hone::onnx::DataValue::Kind;
  RuntimeValue v;
  if (dv.kind == Kind::kTensor) {
    v = RuntimeValue::of(std::move(dv.tensor));
  } else if (dv.kind == Kind::kSequence) {
    v = RuntimeValue::of_sequence(std::move(dv.sequence), dv.elem_type);
  } else {
    v.kind = RuntimeValue::Kind::kNone;
    v.elem_type = dv.elem_type;
  }
  v.optional = dv.optional || dv.kind == Kind::kOptionalNone;
  return v;
}

/// input_K.pb or output_K.pb, K = 0, 1, ... while they exist, each read as
/// the proto the graph's declared value K is stored as (`declared`).
Result<std::vector<RuntimeValue>> load_values(const Graph& g, const std::vector<ValueId>& declared,
                                              const fs::path& set, const char* stem,
                                              bool* all_tensors) {
  std::vector<RuntimeValue> values;
  for (int k = 0;; ++k) {
    const fs::path p = set / fmt::format("{}_{}.pb", stem, k);
    std::error_code ec;
    if (!fs::exists(p, ec)) break;
    auto dv = static_cast<size_t>(k) < declared.size()
                  ? hone::onnx::load_data_file(p, g.value(declared[static_cast<size_t>(k)]).kind)
                  : hone::onnx::load_data_file(p);
    if (!dv)
      return fail(std::move(dv).error().add_context("while reading " + set.filename().string() +
                                                    "/" + p.filename().string()));
    if (dv->kind != hone::onnx::DataValue::Kind::kTensor || dv->optional) *all_tensors = false;
    values.push_back(to_runtime(std::move(*dv)));
  }
  return values;
}

Outcome run_one(const TestCase& test, const ConformanceOptions& o) {
  const fs::path model = test.dir / "model.onnx";
  if (file_contains(model, kTrainingDomain))
    return skipped(fmt::format("training-only ops (domain {})", kTrainingDomain));
  auto graph = hone::onnx::load_model(model.string());
  if (!graph) {
    if (is_string_error(graph.error()))
      return skipped("string tensors: " + graph.error().message());
    return failed(one_line(graph.error()));
  }
  const Graph& g = *graph;
  if (auto why = skip_reason(g)) return skipped(*why);
  bool graph_tensors_only = true;
  for (ValueId id : g.inputs()) graph_tensors_only &= g.value(id).kind == ValueKind::kTensor;
  for (ValueId id : g.outputs()) graph_tensors_only &= g.value(id).kind == ValueKind::kTensor;

  const auto sets = conformance::data_sets(test.dir);
  struct Set {
    std::string name;
    std::vector<RuntimeValue> inputs, outputs;
  };
  std::vector<Set> loaded;
  bool tensors_only = graph_tensors_only;
  for (const fs::path& s : sets) {
    auto in = load_values(g, g.inputs(), s, "input", &tensors_only);
    if (!in)
      return is_string_error(in.error()) ? skipped("string tensors") : failed(one_line(in.error()));
    auto out = load_values(g, g.outputs(), s, "output", &tensors_only);
    if (!out)
      return is_string_error(out.error()) ? skipped("string tensors")
                                          : failed(one_line(out.error()));
    loaded.push_back({s.filename().string(), std::move(*in), std::move(*out)});
  }

  std::unique_ptr<Backend> backend;
  if (!tensors_only) {
    if (o.backend != hone::kReferenceBackend)
      return skipped("sequence or optional values: only the reference interpreter runs these");
  } else {
    auto be = default_registry().create(o.backend);
    if (!be) return failed(one_line(be.error()));
    backend = std::move(*be);
    auto built = backend->build(g);
    if (!built) return failed(one_line(built.error()));
  }

  const conformance::Tolerance tol{o.rtol, o.atol};
  for (const Set& s : loaded) {
    const std::string prefix = loaded.size() > 1 ? s.name + ": " : "";
    std::vector<RuntimeValue> got;
    if (backend) {
      std::vector<Tensor> ins;
      for (const RuntimeValue& v : s.inputs) ins.push_back(v.tensor);
      auto outs = backend->infer(ins);
      if (!outs) return failed(prefix + one_line(outs.error()));
      for (Tensor& t : *outs) got.push_back(RuntimeValue::of(std::move(t)));
    } else {
      auto outs = run_reference(g, s.inputs);
      if (!outs) return failed(prefix + one_line(outs.error()));
      got = std::move(*outs);
    }
    if (got.size() < s.outputs.size())
      return failed(
          fmt::format("{}got {} outputs, expected {}", prefix, got.size(), s.outputs.size()));
    for (size_t i = 0; i < s.outputs.size(); ++i) {
      if (auto why = conformance::compare_values(got[i], s.outputs[i], tol)) {
        const std::string name = i < g.outputs().size() ? g.value(g.outputs()[i]).name : "?";
        return failed(fmt::format("{}output {} '{}': {}", prefix, i, name, *why));
      }
    }
  }
  return pass();
}

Outcome run_guarded(const TestCase& test, const ConformanceOptions& o) {
  try {
    return run_one(test, o);
  } catch (const std::exception& e) {
    return failed(std::string("exception: ") + e.what());
  } catch (...) {
    return failed("exception of unknown type");
  }
}

/// Runs the test in a forked child that sends its outcome back through a
/// pipe, so a segfault or an abort fails that test only, and a test that runs
/// past the timeout is killed. The parent never creates the thread pool, so
/// the child starts with a fresh one.
Outcome run_isolated(const TestCase& test, const ConformanceOptions& o) {
  int fds[2];
  if (::pipe(fds) != 0) return run_guarded(test, o);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return run_guarded(test, o);
  }
  if (pid == 0) {
    ::close(fds[0]);
    apply_requested_threads();
    const Outcome r = run_guarded(test, o);
    const std::string msg =
        std::string(1, static_cast<char>('0' + static_cast<int>(r.status))) + r.reason;
    size_t off = 0;
    while (off < msg.size()) {
      const ssize_t n = ::write(fds[1], msg.data() + off, msg.size() - off);
      if (n <= 0) break;
      off += static_cast<size_t>(n);
    }
    ::close(fds[1]);
    ::_exit(0);  // skip atexit handlers and stdio buffers shared with the parent
  }
  ::close(fds[1]);
  std::string buf;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(o.timeout_s);
  bool timed_out = false;
  char chunk[4096];
  while (true) {
    int wait_ms = -1;
    if (o.timeout_s > 0) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        timed_out = true;
        break;
      }
      wait_ms = static_cast<int>(std::min<int64_t>(left.count(), 1 << 30));
    }
    pollfd p{fds[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) continue;  // re-check the deadline
    const ssize_t n = ::read(fds[0], chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    buf.append(chunk, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int st = 0;
  while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) return failed(fmt::format("timed out after {} s", format_number(o.timeout_s)));
  if (WIFSIGNALED(st))
    return failed(
        fmt::format("crashed with signal {} ({})", WTERMSIG(st), ::strsignal(WTERMSIG(st))));
  if (buf.empty())
    return failed(fmt::format("test process exited with status {} without a result",
                              WIFEXITED(st) ? WEXITSTATUS(st) : -1));
  Outcome r;
  r.status = static_cast<Status>(buf[0] - '0');
  r.reason = buf.substr(1);
  return r;
}

std::string tsv_field(std::string s) {
  for (char& c : s)
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  return s;
}

int run_conformance(const ConformanceOptions& o) {
  std::error_code ec;
  if (!fs::exists(o.dir, ec))
    return report(Error(ErrorCode::kNotFound, o.dir + ": no such directory"));
  if (auto be = default_registry().create(o.backend); !be) return report(be.error());

  std::vector<TestCase> tests;
  for (TestCase& t : conformance::discover_tests(o.dir))
    if (o.filter.empty() || (t.category + "/" + t.name).find(o.filter) != std::string::npos)
      tests.push_back(std::move(t));
  if (tests.empty())
    fmt::print(stderr, "warning: no tests found under {}{}\n", o.dir,
               o.filter.empty() ? "" : " matching '" + o.filter + "'");

  if (!o.isolate) apply_requested_threads();
  std::vector<std::optional<Outcome>> results(tests.size());
  std::mutex mu;
  std::condition_variable cv;
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < tests.size();) {
      Outcome r = o.isolate ? run_isolated(tests[i], o) : run_guarded(tests[i], o);
      std::lock_guard lock(mu);
      results[i] = std::move(r);
      cv.notify_all();
    }
  };
  std::vector<std::jthread> pool;
  const int jobs = std::max(1, o.jobs);
  // Workers run the tests; this thread prints results in order as they come.
  for (int j = 0; j < jobs; ++j) pool.emplace_back(worker);

  struct Counts {
    int64_t pass = 0, fail = 0, skip = 0;
  };
  std::map<std::string, Counts> per_category;
  std::vector<std::string> category_order;
  Counts total;
  std::string tsv = "category\ttest\tstatus\treason\n";
  for (size_t i = 0; i < tests.size(); ++i) {
    Outcome r;
    {
      std::unique_lock lock(mu);
      cv.wait(lock, [&] { return results[i].has_value(); });
      r = *results[i];
    }
    const TestCase& t = tests[i];
    if (!per_category.count(t.category)) category_order.push_back(t.category);
    Counts& c = per_category[t.category];
    const char* status = "PASS";
    if (r.status == Status::kPass) {
      ++c.pass, ++total.pass;
      if (o.verbose) fmt::print("PASS {}/{}\n", t.category, t.name);
    } else if (r.status == Status::kFail) {
      ++c.fail, ++total.fail;
      status = "FAIL";
      fmt::print("FAIL {}/{}: {}\n", t.category, t.name, r.reason);
    } else {
      ++c.skip, ++total.skip;
      status = "SKIP";
      if (o.verbose) fmt::print("SKIP {}/{}: {}\n", t.category, t.name, r.reason);
    }
    std::fflush(stdout);
    tsv += fmt::format("{}\t{}\t{}\t{}\n", tsv_field(t.category), tsv_field(t.name), status,
                       tsv_field(r.reason));
  }
  pool.clear();

  for (const std::string& cat : category_order) {
    const Counts& c = per_category[cat];
    fmt::print("{}: {} passed, {} failed, {} skipped\n", cat, c.pass, c.fail, c.skip);
  }
  fmt::print("{} passed, {} failed, {} skipped\n", total.pass, total.fail, total.skip);
  if (!o.tsv.empty()) {
    auto w = write_file_atomic(o.tsv, tsv);
    if (!w) return report(w.error());
  }
  if (o.min_pass && total.pass < *o.min_pass) {
    fmt::print(stderr, "error: {} tests passed, fewer than --min-pass {}\n", total.pass,
               *o.min_pass);
    return kExitError;
  }
  return kExitOk;
}

}  // namespace

void add_conformance_command(CLI::App& root, std::vector<Command>& commands) {
  auto o = std::make_shared<ConformanceOptions>();
  CLI::App* sub = root.add_subcommand("conformance", "run the ONNX backend tests found under DIR");
  sub->footer(
      "Examples:\n"
      "  hone conformance /usr/share/libonnx-testdata/data --filter conv --tsv conv.tsv\n"
      "  hone conformance /usr/share/libonnx-testdata/data --backend onednn --jobs 2");
  sub->add_option("dir", o->dir, "a test folder, a folder of them, or a folder of such folders")
      ->required()
      ->type_name("DIR");
  sub->add_option("--backend", o->backend, "backend to test")->capture_default_str();
  sub->add_option("--tsv", o->tsv, "also write category, test, status, reason rows here")
      ->type_name("FILE");
  sub->add_option("--filter", o->filter, "only tests whose category/name contains this")
      ->type_name("SUBSTR");
  sub->add_option("--rtol", o->rtol, "relative tolerance for floats")->capture_default_str();
  sub->add_option("--atol", o->atol, "absolute tolerance for floats")->capture_default_str();
  sub->add_option("--jobs", o->jobs, "tests run in parallel")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  sub->add_option("--min-pass", o->min_pass, "exit 1 when fewer tests pass")->type_name("N");
  sub->add_flag("--verbose,-v", o->verbose, "also print PASS and SKIP lines");
  sub->add_flag("--isolate,!--no-isolate", o->isolate,
                "run each test in its own process so a crash fails only that test (default on)");
  sub->add_option("--timeout", o->timeout_s, "seconds a test may run when isolated (0 = no limit)")
      ->capture_default_str();
  commands.push_back({sub, [o] { return run_conformance(*o); }});
}

}  // namespace hone::cli
