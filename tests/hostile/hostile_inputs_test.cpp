// Hostile models, input files and options: each is refused with one clear
// error line, in time, leaving nothing behind.
#include <fcntl.h>
#include <sys/stat.h>
#include <cstring>

#include "hostile_fixture.h"

namespace hone_hostile_test {
namespace {

// --- models ONNX Runtime refuses at load ------------------------------------------

struct ModelCase {
  const char* name;
  void (*mutate)(::onnx::ModelProto&);
  std::vector<std::string> needles;
};

class HostileModel : public Hostile {
 protected:
  // Both `inspect` and `run` must refuse it.
  void refuse(const ::onnx::ModelProto& m, std::initializer_list<std::string> needles) {
    save_model(m, dir_ / "m.onnx");
    expect_clean_error(hone("inspect m.onnx"), 1, needles);
    expect_clean_error(hone("run m.onnx --random-inputs 1"), 1, needles);
  }
};

TEST_F(HostileModel, IrVersion999) {
  auto m = one_node_model("Relu");
  m.set_ir_version(999);
  refuse(m, {"IR version 999"});
}

TEST_F(HostileModel, NoIrVersion) {
  auto m = one_node_model("Relu");
  m.clear_ir_version();
  refuse(m, {"ir_version"});
}

TEST_F(HostileModel, Opset999) {
  auto m = one_node_model("Relu");
  m.mutable_opset_import(0)->set_version(999);
  refuse(m, {"opset 999", "ai.onnx"});
}

TEST_F(HostileModel, Opset0) {
  auto m = one_node_model("Relu");
  m.mutable_opset_import(0)->set_version(0);
  refuse(m, {"opset 0"});
}

TEST_F(HostileModel, NoOpsetImport) {
  auto m = one_node_model("Relu");
  m.clear_opset_import();
  refuse(m, {"imports no opset"});
}

TEST_F(HostileModel, DomainImportedTwice) {
  auto m = one_node_model("Relu");
  m.add_opset_import()->set_version(12);
  refuse(m, {"twice"});
}

// The opsets after libonnx's (18 to 26) are checked against hone's own
// signature rows: one newer than ONNX Runtime reads, a newer op's attribute
// of the wrong kind, a required one missing, or too many inputs.
TEST_F(HostileModel, Opset27) {
  auto m = one_node_model("Relu");
  m.mutable_opset_import(0)->set_version(27);
  refuse(m, {"opset 27", "hone reads 1 to 26"});
}

TEST_F(HostileModel, NewerOpAttributeOfTheWrongKind) {
  auto m = one_node_model("Swish");
  m.mutable_opset_import(0)->set_version(24);
  auto* a = m.mutable_graph()->mutable_node(0)->add_attribute();
  a->set_name("alpha");
  a->set_type(::onnx::AttributeProto::STRING);
  a->set_s("one");
  refuse(m, {"'n0' (Swish)", "'alpha' of type STRING", "takes FLOAT"});
}

TEST_F(HostileModel, NewerOpMissingItsRequiredAttribute) {
  auto m = one_node_model("BitCast");
  m.mutable_opset_import(0)->set_version(26);
  refuse(m, {"'n0' (BitCast)", "required attribute 'to'"});
}

TEST_F(HostileModel, NewerOpWithTooManyInputs) {
  auto m = one_node_model("RMSNormalization");
  m.mutable_opset_import(0)->set_version(23);
  for (int i = 0; i < 2; ++i) m.mutable_graph()->mutable_node(0)->add_input("x");
  refuse(m, {"'n0' (RMSNormalization)", "has 3 inputs", "takes 2"});
}

// As in ONNX's checker, a custom domain's operators are the backends' to
// refuse: `inspect` describes the model, `run` says what no backend can run.
TEST_F(HostileModel, CustomDomainOperator) {
  auto m = one_node_model("Relu");
  m.mutable_graph()->mutable_node(0)->set_domain("evil.domain");
  save_model(m, dir_ / "m.onnx");
  const Ran inspect = hone("inspect m.onnx");
  EXPECT_EQ(inspect.code, 0) << inspect.err;
  expect_clean_error(hone("run m.onnx --random-inputs 1"), 1, {"evil.domain"});
}

TEST_F(HostileModel, UnknownOperator) {
  refuse(one_node_model("Frobnicate"), {"node 'n0'", "Frobnicate", "not an operator"});
}

TEST_F(HostileModel, ConvStridesOfTypeFloat) {
  auto m = one_node_model("Conv", true, {1, 1, 4, 4}, {1, 1, 1, 1});
  auto* a = m.mutable_graph()->mutable_node(0)->add_attribute();
  a->set_name("strides");
  a->set_type(::onnx::AttributeProto::FLOAT);
  a->set_f(2.0f);
  refuse(m, {"node 'n0'", "strides", "FLOAT", "INTS"});
}

TEST_F(HostileModel, UnknownAttributeOnMatMul) {
  auto m = one_node_model("MatMul", true);
  auto* a = m.mutable_graph()->mutable_node(0)->add_attribute();
  a->set_name("alpha");
  a->set_type(::onnx::AttributeProto::FLOAT);
  a->set_f(2.0f);
  refuse(m, {"node 'n0'", "attribute 'alpha'", "does not take"});
}

TEST_F(HostileModel, MissingRequiredAttribute) {
  refuse(one_node_model("Cast"), {"node 'n0'", "required attribute 'to'"});
}

TEST_F(HostileModel, AttributeDeclaredOneTypeHoldingAnother) {
  auto m = one_node_model("LeakyRelu");
  auto* a = m.mutable_graph()->mutable_node(0)->add_attribute();
  a->set_name("alpha");
  a->set_type(::onnx::AttributeProto::INTS);
  a->set_f(0.5f);
  refuse(m, {"alpha"});
}

// DepthToSpace's mode and blocksize are read once (ops::depth_space_attrs)
// and refused there with the attribute named, on every backend and the passes.
TEST_F(HostileModel, DepthToSpaceWithAnUnknownModeOrNoBlocksize) {
  for (const bool no_blocksize : {false, true}) {
    auto m = one_node_model("DepthToSpace", false, {1, 8, 2, 2});
    auto* n = m.mutable_graph()->mutable_node(0);
    auto* bs = n->add_attribute();
    bs->set_name("blocksize");
    bs->set_type(::onnx::AttributeProto::INT);
    bs->set_i(no_blocksize ? 0 : 2);
    auto* mode = n->add_attribute();
    mode->set_name("mode");
    mode->set_type(::onnx::AttributeProto::STRING);
    mode->set_s(no_blocksize ? "DCR" : "XYZ");
    save_model(m, dir_ / "m.onnx");
    if (no_blocksize)
      expect_clean_error(hone("run m.onnx --random-inputs 1"), 1,
                         {"blocksize", "must be positive"});
    else
      expect_clean_error(hone("run m.onnx --random-inputs 1"), 1, {"mode", "XYZ", "DCR or CRD"});
  }
}

TEST_F(HostileModel, WrongInputCount) {
  auto m = one_node_model("Relu");
  m.mutable_graph()->mutable_node(0)->add_input("x");
  refuse(m, {"node 'n0'"});
}

TEST_F(HostileModel, TruncatedAndGarbage) {
  const std::string bytes = one_node_model("Relu").SerializeAsString();
  spit(dir_ / "m.onnx", bytes.substr(0, bytes.size() / 2));
  expect_clean_error(hone("inspect m.onnx"), 1, {"m.onnx"});
  spit(dir_ / "m.onnx", std::string(4096, '\xff'));
  expect_clean_error(hone("run m.onnx --random-inputs 1"), 1, {"do not parse"});
}

TEST_F(HostileModel, ModelIsAFifoOrFolder) {
  ASSERT_EQ(::mkfifo((dir_ / "fifo.onnx").c_str(), 0600), 0);
  expect_clean_error(hone("inspect fifo.onnx"), 1, {"FIFO"});
  fs::create_directory(dir_ / "dir.onnx");
  expect_clean_error(hone("run dir.onnx --random-inputs 1"), 1, {"folder"});
}

// --- external data --------------------------------------------------------------------

TEST_F(HostileModel, ExternalDataAbsolutePath) {
  auto m = one_node_model("MatMul", true);
  make_external(m, "/etc/passwd");
  refuse(m, {"tensor 'w'", "absolute"});
}

TEST_F(HostileModel, ExternalDataDotDot) {
  fs::create_directories(dir_ / "model");
  spit(dir_ / "secret.bin", std::string(32, '\0'));
  auto m = one_node_model("MatMul", true);
  make_external(m, "../secret.bin");
  save_model(m, dir_ / "model" / "m.onnx");
  expect_clean_error(hone("run model/m.onnx --random-inputs 1"), 1, {"outside the model's folder"});
}

TEST_F(HostileModel, ExternalDataSymlinkLeavingTheFolder) {
  fs::create_directories(dir_ / "model");
  spit(dir_ / "secret.bin", std::string(32, '\0'));
  fs::create_symlink(dir_ / "secret.bin", dir_ / "model" / "w.bin");
  auto m = one_node_model("MatMul", true);
  make_external(m, "w.bin");
  save_model(m, dir_ / "model" / "m.onnx");
  expect_clean_error(hone("run model/m.onnx --random-inputs 1"), 1, {"outside the model's folder"});
}

TEST_F(HostileModel, ExternalDataIsADevice) {
  fs::create_directories(dir_ / "model");
  fs::create_symlink("/dev/zero", dir_ / "model" / "w.bin");
  auto m = one_node_model("MatMul", true);
  make_external(m, "w.bin");
  save_model(m, dir_ / "model" / "m.onnx");
  expect_clean_error(hone("run model/m.onnx --random-inputs 1"), 1, {"tensor 'w'"});
}

// A 20 GiB initializer in a sparse file: `inspect` never reads it, `run`
// refuses it against the memory budget, naming it, before reading a byte.
TEST_F(HostileModel, TwentyGigabyteExternalInitializer) {
  const int64_t n = int64_t{5} << 30;  // floats: 20 GiB
  {
    const int fd = ::open((dir_ / "big.bin").c_str(), O_WRONLY | O_CREAT, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, n * 4), 0);
    ::close(fd);
  }
  auto m = one_node_model("MatMul", true, {1, n}, {n, 1});
  make_external(m, "big.bin");
  save_model(m, dir_ / "m.onnx");
  const Ran inspect = hone("inspect m.onnx");
  EXPECT_EQ(inspect.code, 0) << inspect.err;
  EXPECT_NE(inspect.out.find("5368709120"), std::string::npos) << inspect.out;
  expect_no_leftovers();
  expect_clean_error(hone("--max-memory 1G run m.onnx --random-inputs 1"), 1,
                     {"tensor 'w'", "memory budget"});
}

// --- input files -------------------------------------------------------------------------

class HostileInput : public Hostile {
 protected:
  void SetUp() override {
    Hostile::SetUp();
    save_model(one_node_model("Relu"), dir_ / "m.onnx");
    fs::create_directories(dir_ / "in");
  }
};

TEST_F(HostileInput, InputIsAFolder) {
  fs::create_directory(dir_ / "in" / "input_0.npy");
  expect_clean_error(hone("run m.onnx --inputs in"), 1, {"input_0.npy", "folder"});
}

TEST_F(HostileInput, InputIsAFifo) {
  ASSERT_EQ(::mkfifo((dir_ / "in" / "input_0.npy").c_str(), 0600), 0);
  expect_clean_error(hone("run m.onnx --inputs in"), 1, {"input_0.npy", "FIFO"});
}

TEST_F(HostileInput, InputIsDevZero) {
  fs::create_symlink("/dev/zero", dir_ / "in" / "input_0.npy");
  expect_clean_error(hone("run m.onnx --inputs in"), 1, {"input_0.npy", "device"});
  fs::remove(dir_ / "in" / "input_0.npy");
  fs::create_symlink("/dev/zero", dir_ / "in" / "input_0.pb");
  expect_clean_error(hone("run m.onnx --inputs in"), 1, {"input_0.pb", "device"});
}

TEST_F(HostileInput, ExtraInputFileIsRefused) {
  const std::string data(16, '\0');
  spit(dir_ / "in" / "input_0.npy",
       npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 4), }", data));
  spit(dir_ / "in" / "input_1.npy",
       npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 4), }", data));
  expect_clean_error(hone("run m.onnx --inputs in"), 1, {"input_1.npy", "only 1 input"});
}

TEST_F(HostileInput, NpyHeadersThatLie) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      // A shape of 2^40 elements with 16 bytes of data.
      {npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776,), }",
                 std::string(16, '\0')),
       "truncated .npy data"},
      // Dims whose product overflows.
      {npy_bytes(
           "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 16), }",
           std::string(16, '\0')),
       "truncated .npy data"},
      {npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 4), }",
                 std::string(17, '\0')),
       "unexpected bytes"},
      {npy_bytes("{'descr': '<c8', 'fortran_order': False, 'shape': (1, 4), }",
                 std::string(32, '\0')),
       "complex"},
      {npy_bytes("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", "abcd"),
       "structured"},
      {npy_bytes("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (1, 4), }",
                 std::string(16, '\0')),
       "fortran_order"},
      {npy_bytes("{'descr': '<f4', 'shape': (1, 4), }", std::string(16, '\0')), "fortran_order"},
      {std::string("\x93NUMPY\x01\x00\xff\xff", 10), "truncated .npy header"},
      {std::string("\x93NUMPY\x02\x00\xff\xff\xff\x7f", 12), "header declares"},
      {std::string("\x93NUMPY\x09\x00\x10\x00", 10), "format version 9.0"},
      {"not an npy file at all", "magic"},
  };
  for (const auto& [bytes, needle] : cases) {
    SCOPED_TRACE(needle);
    spit(dir_ / "in" / "input_0.npy", bytes);
    expect_clean_error(hone("run m.onnx --inputs in"), 1, {"input_0.npy", needle});
  }
}

TEST_F(HostileInput, TensorProtoFieldsThatLie) {
  ::onnx::TensorProto t;
  t.set_data_type(::onnx::TensorProto::FLOAT);
  t.add_dims(1);
  t.add_dims(int64_t{1} << 40);
  t.set_raw_data(std::string(16, '\0'));
  spit(dir_ / "in" / "input_0.pb", t.SerializeAsString());
  expect_clean_error(hone("run m.onnx --inputs in"), 1, {"input_0.pb", "raw_data"});
  t.set_dims(1, -4);
  spit(dir_ / "in" / "input_0.pb", t.SerializeAsString());
  expect_clean_error(hone("run m.onnx --inputs in"), 1, {"input_0.pb", "negative dim"});
  t.set_dims(1, 4);
  t.set_data_location(::onnx::TensorProto::EXTERNAL);
  spit(dir_ / "in" / "input_0.pb", t.SerializeAsString());
  expect_clean_error(hone("run m.onnx --inputs in"), 1, {"input_0.pb", "external data"});
}

// --- options -----------------------------------------------------------------------------

TEST_F(HostileInput, AbsurdThreadCountsAndMemory) {
  expect_clean_error(hone("--threads 1000000 run m.onnx --random-inputs 1"), 2, {"--threads"});
  expect_clean_error(hone("run m.onnx --random-inputs 1 --threads -3"), 2, {"--threads"});
  expect_clean_error(hone("--max-memory lots run m.onnx --random-inputs 1"), 2, {"--max-memory"});
  expect_clean_error(hone("--max-memory 1K run m.onnx --random-inputs 1 --dim batch=1"), 2,
                     {"--dim batch"});
  // A budget below the input's size names the tensor that did not fit.
  expect_clean_error(hone("--max-memory 8 run m.onnx --random-inputs 1"), 1, {"memory budget"});
}

// A token id outside its embedding table: every backend refuses the run with
// one line naming the index (aot checks every id before its generated
// Gather reads a row), no crash.
TEST_F(HostileInput, TokenIdOutsideTheEmbeddingTable) {
  ::onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("embedding");
  ::onnx::ValueInfoProto ids = tensor_info("ids", {1, 3});
  ids.mutable_type()->mutable_tensor_type()->set_elem_type(::onnx::TensorProto::INT64);
  *g->add_input() = ids;
  auto* table = g->add_initializer();
  table->set_name("table");
  table->set_data_type(::onnx::TensorProto::FLOAT);
  table->add_dims(5);
  table->add_dims(2);
  table->set_raw_data(std::string(5 * 2 * 4, '\0'));
  auto* n = g->add_node();
  n->set_name("embed");
  n->set_op_type("Gather");
  n->add_input("table");
  n->add_input("ids");
  n->add_output("y");
  ::onnx::ValueInfoProto y;
  y.set_name("y");
  y.mutable_type()->mutable_tensor_type()->set_elem_type(::onnx::TensorProto::FLOAT);
  *g->add_output() = y;
  save_model(m, dir_ / "embed.onnx");
  std::string data(3 * 8, '\0');
  const int64_t values[3] = {0, 7, 1};
  std::memcpy(data.data(), values, sizeof values);
  spit(dir_ / "in" / "input_0.npy",
       npy_bytes("{'descr': '<i8', 'fortran_order': False, 'shape': (1, 3), }", data));
  expect_clean_error(hone("run embed.onnx --backend aot --inputs in"), 1,
                     {"Gather", "index 7", "[-5, 5)"});
  expect_clean_error(hone("run embed.onnx --backend reference --inputs in"), 1,
                     {"Gather", "index 7", "out of range"});
}

}  // namespace
}  // namespace hone_hostile_test
