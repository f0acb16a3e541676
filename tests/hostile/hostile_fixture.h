// The fixture the hostile-input tests share: every case runs the `hone`
// binary under `timeout` in a private folder with a private TMPDIR, HOME and
// cache, and asserts what a user must see: one `error:` line naming the
// problem, exit code 1 or 2, no crash or hang, and nothing left behind.
#pragma once

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

namespace hone_hostile_test {

namespace fs = std::filesystem;

/// Seconds any one command may take; a hang fails the case (exit 124).
inline constexpr int kTimeoutSeconds = 30;

struct Ran {
  int code = -1;
  std::string out, err;
};

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void spit(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

class Hostile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("hone_hostile_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "tmp");
    fs::create_directories(dir_ / "home");
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  /// Runs `hone ARGS` (ARGS is shell text) in dir_ with a private TMPDIR,
  /// HOME and cache; `prefix` goes before the command (e.g. an environment).
  Ran hone(const std::string& args, const std::string& prefix = "") {
    const fs::path out = dir_ / "stdout.txt", err = dir_ / "stderr.txt";
    const std::string cmd =
        "cd " + quote(dir_.string()) + " && TMPDIR=" + quote((dir_ / "tmp").string()) +
        " HOME=" + quote((dir_ / "home").string()) +
        " HONE_CACHE_DIR=" + quote(cache_dir().string()) + " " + prefix + " timeout -s KILL " +
        std::to_string(kTimeoutSeconds) + " " + HONE_CLI_PATH + " " + args + " >" +
        quote(out.string()) + " 2>" + quote(err.string());
    const int st = std::system(cmd.c_str());
    Ran r;
    r.code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    r.out = slurp(out);
    r.err = slurp(err);
    fs::remove(out);
    fs::remove(err);
    return r;
  }

  /// The aot compile cache is shared by every case (compiles are slow); it
  /// lives in the build folder.
  static fs::path cache_dir() { return HONE_HOSTILE_CACHE; }

  /// What every refused case must look like.
  void expect_clean_error(const Ran& r, int code, std::initializer_list<std::string> needles) {
    EXPECT_EQ(r.code, code) << "stderr: " << r.err << "\nstdout: " << r.out;
    int error_lines = 0;
    std::istringstream lines(r.err);
    std::string line;
    while (std::getline(lines, line))
      if (line.rfind("error: ", 0) == 0) ++error_lines;
    EXPECT_EQ(error_lines, 1) << "stderr: " << r.err;
    for (const char* bad : {"terminate called", "Aborted", "Segmentation", "what():"})
      EXPECT_EQ(r.err.find(bad), std::string::npos) << "stderr: " << r.err;
    for (const std::string& n : needles)
      EXPECT_NE(r.err.find(n), std::string::npos) << "'" << n << "' not in: " << r.err;
    expect_no_leftovers();
  }

  /// Nothing left in the private TMPDIR, and no temporary next to any file.
  void expect_no_leftovers() {
    std::vector<std::string> left;
    for (const auto& e : fs::directory_iterator(dir_ / "tmp")) left.push_back(e.path().string());
    for (const auto& e : fs::recursive_directory_iterator(dir_)) {
      const std::string name = e.path().filename().string();
      if (name.find(".hone-tmp-") != std::string::npos || name.find(".tmp-") != std::string::npos)
        left.push_back(e.path().string());
    }
    EXPECT_TRUE(left.empty()) << "left behind: " << (left.empty() ? "" : left.front());
  }

  fs::path dir_;
};

// --- ONNX models built by hand ---------------------------------------------------

inline ::onnx::ValueInfoProto tensor_info(const std::string& name, std::vector<int64_t> dims) {
  ::onnx::ValueInfoProto vi;
  vi.set_name(name);
  auto* tt = vi.mutable_type()->mutable_tensor_type();
  tt->set_elem_type(::onnx::TensorProto::FLOAT);
  for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
  return vi;
}

/// y = op(x [, w]) with x f32[1,4] (or `x_dims`), opset 13, IR 8.
inline ::onnx::ModelProto one_node_model(const std::string& op, bool with_weight = false,
                                         std::vector<int64_t> x_dims = {1, 4},
                                         std::vector<int64_t> w_dims = {4, 2}) {
  ::onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("hostile");
  *g->add_input() = tensor_info("x", x_dims);
  auto* n = g->add_node();
  n->set_name("n0");
  n->set_op_type(op);
  n->add_input("x");
  if (with_weight) {
    n->add_input("w");
    auto* w = g->add_initializer();
    w->set_name("w");
    w->set_data_type(::onnx::TensorProto::FLOAT);
    int64_t numel = 1;
    for (int64_t d : w_dims) {
      w->add_dims(d);
      numel *= d;
    }
    // Huge weights are made external by the caller; no 20 GB string here.
    if (numel <= (int64_t{1} << 20))
      w->set_raw_data(std::string(static_cast<size_t>(numel) * 4, '\0'));
  }
  n->add_output("y");
  ::onnx::ValueInfoProto y;
  y.set_name("y");
  y.mutable_type()->mutable_tensor_type()->set_elem_type(::onnx::TensorProto::FLOAT);
  *g->add_output() = y;
  return m;
}

inline void save_model(const ::onnx::ModelProto& m, const fs::path& file) {
  spit(file, m.SerializeAsString());
}

/// Marks initializer `w` of `m` as external data at `location`.
inline void make_external(::onnx::ModelProto& m, const std::string& location) {
  auto* w = m.mutable_graph()->mutable_initializer(0);
  w->clear_raw_data();
  w->set_data_location(::onnx::TensorProto::EXTERNAL);
  auto* kv = w->add_external_data();
  kv->set_key("location");
  kv->set_value(location);
}

/// A .npy v1.0 file with `header` (a dict literal) and `data` bytes.
inline std::string npy_bytes(const std::string& header, const std::string& data) {
  std::string h = header;
  while ((10 + h.size() + 1) % 64 != 0) h += ' ';
  h += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(h.size() & 0xff);
  out += static_cast<char>(h.size() >> 8);
  return out + h + data;
}

}  // namespace hone_hostile_test
