#include "onnx/shape_infer.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <cerrno>
#include <chrono>
#include <exception>
#include <string>
#include <unordered_map>

#include "core/log.h"

// Under a sanitizer, a crash in the child must not run the fuzzer's death
// callback (which would record the parent's input as a crash of its own).
extern "C" void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

namespace hone::onnx::detail {
namespace {

using ::onnx::AttributeProto;
using ::onnx::GraphProto;
using ::onnx::ModelProto;
using ::onnx::NodeProto;

/// How long ONNX's inference may run in its child before it is given up.
constexpr int kInferenceTimeoutMs = 120'000;

/// Why a node fails its schema, or "".
std::string verify_schemas(const GraphProto& gp, const std::unordered_map<std::string, int>& opsets,
                           int depth) {
  if (depth > 64) return "subgraphs nested too deeply";
  for (const NodeProto& n : gp.node()) {
    const std::string domain = n.domain() == "ai.onnx" ? std::string() : n.domain();
    auto it = opsets.find(domain);
    if (it != opsets.end()) {
      const auto* schema = ::onnx::OpSchemaRegistry::Schema(n.op_type(), it->second, domain);
      if (schema != nullptr) {
        try {
          schema->Verify(n);
        } catch (const std::exception& e) {
          return e.what();
        }
      }
    }
    for (const AttributeProto& a : n.attribute()) {
      if (a.has_g()) {
        std::string why = verify_schemas(a.g(), opsets, depth + 1);
        if (!why.empty()) return why;
      }
      for (const GraphProto& sub : a.graphs()) {
        std::string why = verify_schemas(sub, opsets, depth + 1);
        if (!why.empty()) return why;
      }
    }
  }
  return "";
}

/// Drops initializer payloads (the parent has them) so the child sends back
/// little more than the types it inferred.
void strip_initializers(GraphProto& gp) {
  gp.clear_initializer();
  gp.clear_sparse_initializer();
  for (NodeProto& n : *gp.mutable_node())
    for (AttributeProto& a : *n.mutable_attribute()) {
      if (a.has_g()) strip_initializers(*a.mutable_g());
      for (GraphProto& sub : *a.mutable_graphs()) strip_initializers(sub);
    }
}

/// Copies the types inference found in `from` into `to`: the same graphs in
/// the same order, as the child only added value_info and typed I/O.
void copy_inferred(const GraphProto& from, GraphProto& to) {
  *to.mutable_value_info() = from.value_info();
  if (from.input_size() == to.input_size()) *to.mutable_input() = from.input();
  if (from.output_size() == to.output_size()) *to.mutable_output() = from.output();
  if (from.node_size() != to.node_size()) return;
  for (int i = 0; i < from.node_size(); ++i) {
    const NodeProto& fn = from.node(i);
    NodeProto& tn = *to.mutable_node(i);
    if (fn.attribute_size() != tn.attribute_size()) continue;
    for (int j = 0; j < fn.attribute_size(); ++j) {
      const AttributeProto& fa = fn.attribute(j);
      AttributeProto& ta = *tn.mutable_attribute(j);
      if (fa.has_g() && ta.has_g()) copy_inferred(fa.g(), *ta.mutable_g());
      if (fa.graphs_size() == ta.graphs_size())
        for (int k = 0; k < fa.graphs_size(); ++k)
          copy_inferred(fa.graphs(k), *ta.mutable_graphs(k));
    }
  }
}

/// Runs in the forked child: infer, strip, write the result to `fd`, exit.
[[noreturn]] void child_infer(ModelProto& model, int fd) {
  if (__sanitizer_set_death_callback != nullptr) __sanitizer_set_death_callback(nullptr);
  int code = 0;
  try {
    ::onnx::shape_inference::InferShapes(model);
  } catch (...) {
    code = 3;  // what it inferred before throwing is still sound; send it
  }
  strip_initializers(*model.mutable_graph());
  std::string bytes;
  if (!model.SerializeToString(&bytes)) ::_exit(4);
  const char* p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) ::_exit(5);
    p += n;
    left -= static_cast<size_t>(n);
  }
  ::_exit(code);
}

/// Forks, lets the child run ONNX's inference on a copy-on-write view of
/// `model`, and reads back what it found. A crash, hang or error in the child
/// costs only the inferred types. Returns false when nothing came back.
bool infer_in_child(ModelProto& model, const char* who) {
  int fds[2];
  if (::pipe(fds) != 0) {
    HONE_LOG_DEBUG("{}: skipping shape inference: pipe() failed", who);
    return false;
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    HONE_LOG_DEBUG("{}: skipping shape inference: fork() failed", who);
    return false;
  }
  if (pid == 0) {
    ::close(fds[0]);
    child_infer(model, fds[1]);
  }
  ::close(fds[1]);

  std::string bytes;
  bool timed_out = false;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(kInferenceTimeoutMs);
  char buf[1 << 16];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd pfd{fds[0], POLLIN, 0};
    const int ready = ::poll(&pfd, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {
      timed_out = true;
      break;
    }
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    bytes.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }

  if (timed_out) {
    HONE_LOG_DEBUG("{}: shape inference gave up after {} ms", who, kInferenceTimeoutMs);
    return false;
  }
  if (WIFSIGNALED(status)) {
    HONE_LOG_DEBUG("{}: ONNX shape inference crashed (signal {}); continuing without it", who,
                   WTERMSIG(status));
    return false;
  }
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code != 0 && code != 3) {
    HONE_LOG_DEBUG("{}: ONNX shape inference failed (exit {}); continuing without it", who, code);
    return false;
  }
  if (code == 3) HONE_LOG_DEBUG("{}: shape inference stopped early, keeping what it found", who);
  ModelProto inferred;
  if (!inferred.ParseFromString(bytes)) {
    HONE_LOG_DEBUG("{}: shape inference result did not parse; continuing without it", who);
    return false;
  }
  copy_inferred(inferred.graph(), *model.mutable_graph());
  return true;
}

}  // namespace

bool infer_shapes_guarded(ModelProto& model, const char* who) {
  std::unordered_map<std::string, int> opsets;
  for (const auto& op : model.opset_import())
    opsets[op.domain() == "ai.onnx" ? std::string() : op.domain()] = static_cast<int>(op.version());
  const std::string why = verify_schemas(model.graph(), opsets, 0);
  if (!why.empty()) {
    HONE_LOG_DEBUG("{}: skipping shape inference: {}", who, why);
    return false;
  }
  return infer_in_child(model, who);
}

}  // namespace hone::onnx::detail
