// The record of the cuda backend's timed kernel choices (kernel_choices.h):
// its text format, the errors for malformed values, and replay against a
// candidate list. None of it needs a device.
#include "backends/cuda/kernel_choices.h"

#include <gtest/gtest.h>

#include "cuda_test_util.h"
#include "hone/logging.h"

namespace hone::cuda {
namespace {

using testing_util::uniform;
using Dims = std::vector<std::vector<int64_t>>;

TEST(CudaKernelChoices, FormatAndParseRoundTripWithEscapes) {
  KernelChoices rec;
  std::string last;
  rec.on_change([&](const std::string& t) { last = t; });
  // Labels and kernels holding every reserved character, recorded out of order.
  rec.record("'b;=|%\n' (MatMul)+Add", {{8, 64}, {64, 32}, {32}}, "bf16",
             "matmul.bf16.cuda.cublaslt+bias", KernelChoices::How::kTimed);
  rec.record("'a' (Conv)+Relu", {{1, 3, 8, 8}, {4, 3, 3, 3}, {}}, "tf32",
             "conv2d.f32.cuda.cudnn[algo 1, tf32]+relu", KernelChoices::How::kReused);
  rec.record("'a' (Conv)+Relu cudnn-find", {{1, 3, 8, 8}, {4, 3, 3, 3}, {}}, "tf32",
             "cudnn[algo 1, math 1]", KernelChoices::How::kTimed);
  const std::string text = rec.text();
  EXPECT_EQ(last, text);
  EXPECT_EQ(text,
            "'a' (Conv)+Relu cudnn-find|[1,3,8,8][4,3,3,3][]|tf32=cudnn[algo 1, math 1];"
            "'a' (Conv)+Relu|[1,3,8,8][4,3,3,3][]|tf32=conv2d.f32.cuda.cudnn[algo 1, tf32]+relu;"
            "'b%3B%3D%7C%25%0A' (MatMul)+Add|[8,64][64,32][32]|bf16="
            "matmul.bf16.cuda.cublaslt+bias");
  auto parsed = KernelChoices::parse(text);
  ASSERT_TRUE(parsed) << parsed.error().to_string();
  ASSERT_EQ(parsed->size(), 3u);
  EXPECT_EQ(KernelChoices::format(*parsed), text);
  const auto& e =
      parsed->at(KernelChoices::key("'b;=|%\n' (MatMul)+Add", {{8, 64}, {64, 32}, {32}}, "bf16"));
  EXPECT_EQ(e.label, "'b;=|%\n' (MatMul)+Add");
  EXPECT_EQ(e.shapes, "[8,64][64,32][32]");
  EXPECT_EQ(e.mode, "bf16");
  EXPECT_EQ(e.kernel, "matmul.bf16.cuda.cublaslt+bias");
  // A record made from the parsed entries formats the same text: the same
  // choices give the same bytes, whatever order they were made in.
  EXPECT_EQ(KernelChoices(*parsed).text(), text);
  // Lower-case escapes read the same.
  auto lower = KernelChoices::parse("'x%3b' (Relu)|[2]|fp32=k");
  ASSERT_TRUE(lower) << lower.error().to_string();
  EXPECT_EQ(lower->begin()->second.label, "'x;' (Relu)");
}

TEST(CudaKernelChoices, NothingRecordedAndRecordedNothingDiffer) {
  for (const char* none : {"", "-"}) {
    auto p = KernelChoices::parse(none);
    ASSERT_TRUE(p) << none;
    EXPECT_TRUE(p->empty()) << none;
  }
  EXPECT_EQ(KernelChoices::format({}), "-");
  EXPECT_EQ(KernelChoices().text(), "-");
}

TEST(CudaKernelChoices, MalformedEntriesAreRefusedByName) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"garbage", "garbage"},
      {"'a' (Relu)|[2]=k", "'a' (Relu)|[2]=k"},
      {"'a' (Relu)|[2]|fp32|x=k", "'a' (Relu)|[2]|fp32|x=k"},
      {"'a' (Relu)|[2,x]|fp32=k", "[2,x]"},
      {"'a' (Relu)|2|fp32=k", "shapes '2'"},
      {"'a' (Relu)|[2|fp32=k", "shapes '[2'"},
      {"'a' (Relu)||fp32=k", "shapes ''"},
      {"'a' (Relu)|[2]|int8=k", "mode 'int8'"},
      {"|[2]|fp32=k", "empty label"},
      {"'a' (Relu)|[2]|fp32=", "empty kernel"},
      {"'a%zz' (Relu)|[2]|fp32=k", "%XX"},
      {"'a%4' (Relu)|[2]|fp32=k", "%XX"},
      {"'a' (Relu)|[2]|fp32=k%", "%XX"},
      {"'a' (Relu)|[2]|fp32=k;'a' (Relu)|[2]|fp32=j", "given twice"},
      {"'a%3B' (Relu)|[2]|fp32=k;'a%3b' (Relu)|[2]|fp32=j", "given twice"},
      {"'a' (Relu)|[2]|fp32=k;", "entry ''"},
      {"-;'a' (Relu)|[2]|fp32=k", "entry '-'"},
  };
  for (const auto& [text, needle] : cases) {
    SCOPED_TRACE(text);
    auto p = KernelChoices::parse(text);
    ASSERT_FALSE(p);
    EXPECT_EQ(p.error().code(), ErrorCode::kInvalidArgument);
    const std::string msg = p.error().message();
    EXPECT_NE(msg.find("kernel_choices"), std::string::npos) << msg;
    EXPECT_NE(msg.find(needle), std::string::npos) << msg;
  }
}

TEST(CudaKernelChoices, ReplayTakesTheRecordedKernelOrSaysWhyNot) {
  const Dims in = {{4, 8}, {8, 2}};
  auto given = KernelChoices::parse("'m' (MatMul)|[4,8][8,2]|bf16=matmul.f32.cuda.sgemm");
  ASSERT_TRUE(given);
  KernelChoices rec(*given);
  int changes = 0;
  rec.on_change([&](const std::string&) { ++changes; });
  const std::string key = KernelChoices::key("'m' (MatMul)", in, "bf16");
  auto i = rec.replay(key, {"matmul.bf16.cuda.gemm_ex", "matmul.f32.cuda.sgemm"}, "'m' (MatMul)");
  ASSERT_TRUE(i.has_value());
  EXPECT_EQ(*i, 1u);
  EXPECT_EQ(rec.counts().replayed, 1u);
  // Another precision is another key: nothing to replay.
  EXPECT_FALSE(rec.replay(KernelChoices::key("'m' (MatMul)", in, "fp16"),
                          {"matmul.f16.cuda.gemm_ex", "matmul.f32.cuda.sgemm"}, "'m' (MatMul)"));
  // The recorded kernel missing here: a warning naming the unit and the kernel.
  set_log_level(LogLevel::kWarn);
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(rec.replay(key, {"matmul.bf16.cuda.gemm_ex"}, "'m' (MatMul)"));
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("'m' (MatMul)"), std::string::npos) << log;
  EXPECT_NE(log.find("matmul.f32.cuda.sgemm"), std::string::npos) << log;
  EXPECT_NE(log.find("timing them instead"), std::string::npos) << log;
  EXPECT_EQ(rec.counts().replayed, 1u);
  // The caller then times and records its new choice: the config follows.
  rec.record("'m' (MatMul)", in, "bf16", "matmul.bf16.cuda.gemm_ex", KernelChoices::How::kTimed);
  EXPECT_EQ(changes, 1);
  EXPECT_EQ(rec.find(key), std::optional<std::string>("matmul.bf16.cuda.gemm_ex"));
  // Recording the same kernel again changes nothing.
  rec.record("'m' (MatMul)", in, "bf16", "matmul.bf16.cuda.gemm_ex", KernelChoices::How::kReused);
  EXPECT_EQ(changes, 1);
  const ChoiceCounts c = rec.counts();
  EXPECT_EQ(c.timed, 1u);
  EXPECT_EQ(c.reused, 1u);
  EXPECT_EQ(c.replayed, 1u);
  const auto lines = rec.lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "choice: 'm' (MatMul) [4,8][8,2] bf16 -> matmul.bf16.cuda.gemm_ex");
}

TEST(CudaKernelChoices, ALayerPassesThroughButKeepsATrialApart) {
  const Dims in = {{4, 8}, {8, 2}};
  auto given = KernelChoices::parse("'m' (MatMul)|[4,8][8,2]|bf16=matmul.f32.cuda.sgemm");
  ASSERT_TRUE(given);
  auto backend = std::make_shared<KernelChoices>(*given);
  int changes = 0;
  backend->on_change([&](const std::string&) { ++changes; });
  KernelChoices block(backend);
  const std::string m = KernelChoices::key("'m' (MatMul)", in, "bf16");
  const std::string c = KernelChoices::key("'c' (Conv)", in, "bf16");
  // Outside a trial: reads, writes and counts are the backend's.
  EXPECT_EQ(block.find(m), std::optional<std::string>("matmul.f32.cuda.sgemm"));
  EXPECT_EQ(block.replay(m, {"matmul.f32.cuda.sgemm"}, "'m' (MatMul)"), std::optional<size_t>(0));
  block.record("'c' (Conv)", in, "bf16", "conv.a", KernelChoices::How::kTimed);
  EXPECT_EQ(changes, 1);
  EXPECT_EQ(backend->find(c), std::optional<std::string>("conv.a"));
  EXPECT_EQ(backend->counts().replayed, 1u);
  EXPECT_EQ(backend->counts().timed, 1u);
  EXPECT_EQ(block.text(), backend->text());
  // A trial sees the backend's entries, keeps its own writes and counts.
  block.begin_trial();
  EXPECT_EQ(block.replay(m, {"matmul.f32.cuda.sgemm"}, "'m' (MatMul)"), std::optional<size_t>(0));
  block.record("'c' (Conv)", in, "bf16", "conv.b", KernelChoices::How::kTimed);
  block.record("'d' (Conv)", in, "bf16", "conv.d", KernelChoices::How::kReused);
  EXPECT_EQ(block.find(c), std::optional<std::string>("conv.b"));
  EXPECT_EQ(backend->find(c), std::optional<std::string>("conv.a"));
  EXPECT_FALSE(backend->find(KernelChoices::key("'d' (Conv)", in, "bf16")));
  EXPECT_EQ(changes, 1);
  EXPECT_EQ(backend->counts().replayed, 1u);
  const KernelChoices::Trial kept = block.end_trial();
  EXPECT_EQ(kept.entries.size(), 2u);
  EXPECT_EQ(kept.counts.timed, 1u);
  EXPECT_EQ(kept.counts.reused, 1u);
  EXPECT_EQ(kept.counts.replayed, 1u);
  // A dropped trial leaves nothing behind.
  block.begin_trial();
  block.record("'e' (Conv)", in, "bf16", "conv.e", KernelChoices::How::kTimed);
  (void)block.end_trial();
  EXPECT_FALSE(block.find(KernelChoices::key("'e' (Conv)", in, "bf16")));
  // A committed one lands in the backend as if recorded there: once.
  block.commit(kept);
  EXPECT_EQ(changes, 2);
  EXPECT_EQ(backend->find(c), std::optional<std::string>("conv.b"));
  EXPECT_EQ(backend->find(KernelChoices::key("'d' (Conv)", in, "bf16")),
            std::optional<std::string>("conv.d"));
  const ChoiceCounts n = backend->counts();
  EXPECT_EQ(n.timed, 2u);
  EXPECT_EQ(n.reused, 1u);
  EXPECT_EQ(n.replayed, 2u);
  EXPECT_EQ(backend->lines().size(), 3u);
  block.commit(kept);  // the same again changes no entry
  EXPECT_EQ(changes, 2);
}

TEST(CudaKernelChoices, TheBackendRefusesAMalformedValueBeforeLookingForADevice) {
  auto be = std::make_unique<CudaBackend>();
  ASSERT_TRUE(be->config().has("kernel_choices"));
  EXPECT_EQ(be->config().get<std::string>("kernel_choices", "x"), "");
  ASSERT_TRUE(be->configure("kernel_choices", "'fc' (MatMul)|[2,8]|fp64=k"));
  std::mt19937 rng(4);
  GraphBuilder b("small");
  ValueId x = b.input("x", DType::kF32, Shape{2, 8});
  b.output(b.relu(b.matmul(x, b.constant("w", uniform(rng, {8, 4})))), "y");
  auto built = be->build(*std::move(b).build());
  ASSERT_FALSE(built);
  EXPECT_EQ(built.error().code(), ErrorCode::kInvalidArgument) << built.error().to_string();
  EXPECT_NE(built.error().to_string().find("kernel_choices entry '"
                                           "'fc' (MatMul)|[2,8]|fp64=k'"),
            std::string::npos)
      << built.error().to_string();
  EXPECT_EQ(be->selections().timed, 0u);
}

}  // namespace
}  // namespace hone::cuda
