// The pure part of the cuda backend's activations setting
// (activations_choice.h): its values, the kernel_choices label and the
// entries' check, the median and the tie rule, the kernel plan's line, and
// the backend refusing a malformed value or entry before it looks for a
// device. None of it needs a GPU.
#include "backends/cuda/activations_choice.h"

#include <gtest/gtest.h>

#include "cuda_test_util.h"

namespace hone::cuda {
namespace {

using testing_util::uniform;

Graph small_graph() {
  std::mt19937 rng(5);
  GraphBuilder b("small");
  ValueId x = b.input("x", DType::kF32, Shape{2, 8});
  b.output(b.relu(b.matmul(x, b.constant("w", uniform(rng, {8, 4})))), "y");
  return *std::move(b).build();
}

TEST(CudaActivationsChoice, SettingValues) {
  EXPECT_EQ(*parse_activations("f32"), ActivationsMode::kF32);
  EXPECT_EQ(*parse_activations("half"), ActivationsMode::kHalf);
  EXPECT_EQ(*parse_activations("auto"), ActivationsMode::kAuto);
  auto bad = parse_activations("bf16");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(bad.error().message(), "cuda activations 'bf16': expected auto, f32 or half");
  EXPECT_EQ(CudaBackend().config().get<std::string>("activations", ""), "auto");
}

TEST(CudaActivationsChoice, LabelNamesTheBlockAndItsFirstNode) {
  const Graph g = small_graph();
  const std::string label = activations_label(g);
  EXPECT_EQ(label, "block 'small' from '" + g.nodes().front().name + "' (MatMul) activations");
  EXPECT_TRUE(is_activations_label(label));
  EXPECT_FALSE(is_activations_label("'fc' (MatMul)+Add"));
  EXPECT_FALSE(is_activations_label("'conv' (Conv) cudnn-find"));
  // Through the record's text and back.
  KernelChoices rec;
  rec.record(label, {{2, 8}}, "bf16", "half", KernelChoices::How::kTimed);
  auto parsed = KernelChoices::parse(rec.text());
  ASSERT_TRUE(parsed) << parsed.error().to_string();
  ASSERT_EQ(parsed->size(), 1u);
  EXPECT_EQ(parsed->begin()->second.label, label);
  EXPECT_TRUE(check_activations_entries(*parsed));
}

TEST(CudaActivationsChoice, AnEntryNamesHalfOrF32) {
  const std::string label = "block 'm_block' from 'c1' (Conv) activations";
  EXPECT_TRUE(*recorded_half({label, "[8,3,32,32]", "bf16", "half"}));
  EXPECT_FALSE(*recorded_half({label, "[8,3,32,32]", "bf16", "f32"}));
  for (const char* k : {"x", "bf16", "Half", "f32 "}) {
    SCOPED_TRACE(k);
    auto r = recorded_half({label, "[8,3,32,32]", "fp16", k});
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(
        r.error().message().find("kernel_choices entry '" + label + "|[8,3,32,32]|fp16=" + k + "'"),
        std::string::npos)
        << r.error().message();
    EXPECT_NE(r.error().message().find("'half' or 'f32'"), std::string::npos);
  }
  // Only activations entries are held to it: a kernel entry's KERNEL is free.
  auto mixed = KernelChoices::parse("'fc' (MatMul)|[2,8]|bf16=x;" + label + "|[2,8]|bf16=f32");
  ASSERT_TRUE(mixed);
  EXPECT_TRUE(check_activations_entries(*mixed));
  auto bad = KernelChoices::parse("'fc' (MatMul)|[2,8]|bf16=x;" + label + "|[2,8]|bf16=x");
  ASSERT_TRUE(bad);
  auto r = check_activations_entries(*bad);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find(label + "|[2,8]|bf16=x'"), std::string::npos)
      << r.error().message();
}

TEST(CudaActivationsChoice, MedianAndTies) {
  EXPECT_EQ(median_ms({}), 0.0);
  EXPECT_EQ(median_ms({3.0}), 3.0);
  EXPECT_EQ(median_ms({5.0, 1.0, 9.0, 2.0, 100.0}), 5.0);
  EXPECT_EQ(median_ms({4.0, 1.0, 2.0, 3.0}), 2.5);
  EXPECT_TRUE(half_wins(1.0, 1.5));
  EXPECT_FALSE(half_wins(1.5, 1.0));
  EXPECT_FALSE(half_wins(1.0, 1.0));  // a tie keeps f32
}

TEST(CudaActivationsChoice, PlanLineSaysWhatAndHow) {
  using How = ActivationsDecision::How;
  const std::string l = "block 'b' from 'c' (Conv) activations";
  EXPECT_EQ(activations_line(l, {true, How::kTimed, 2.34, 4.51}, "bf16"),
            l + ": half (bf16), timed: half 2.340 ms, f32 4.510 ms");
  EXPECT_EQ(activations_line(l, {false, How::kReused, 3.61, 2.28}, "f16"),
            l + ": f32, timed earlier in this process: half 3.610 ms, f32 2.280 ms");
  EXPECT_EQ(activations_line(l, {true, How::kReplayed, 0, 0}, "bf16"),
            l + ": half (bf16), from kernel_choices (not timed)");
  EXPECT_EQ(activations_line(l, {false, How::kOnlyF32, 0, 0}, "bf16"),
            l + ": f32, no value has a bf16 kernel here (not timed)");
  EXPECT_EQ(activations_line(l, {false, How::kHalfFailed, 0, 0}, "f16"),
            l + ": f32, the f16 Program failed (the log says why)");
}

TEST(CudaActivationsChoice, TheBackendRefusesBadValuesBeforeLookingForADevice) {
  {
    CudaBackend be;
    ASSERT_TRUE(be.configure("precision", "bf16"));
    ASSERT_TRUE(be.configure("activations", "fast"));
    auto built = be.build(small_graph());
    ASSERT_FALSE(built);
    EXPECT_EQ(built.error().code(), ErrorCode::kInvalidArgument) << built.error().to_string();
    EXPECT_NE(built.error().to_string().find("cuda activations 'fast'"), std::string::npos)
        << built.error().to_string();
  }
  const std::string entry = "block 'small' from 'mm' (MatMul) activations|[2,8]|bf16=x";
  CudaBackend be;
  ASSERT_TRUE(be.configure("precision", "bf16"));
  ASSERT_TRUE(be.configure("kernel_choices", entry));
  auto built = be.build(small_graph());
  ASSERT_FALSE(built);
  EXPECT_EQ(built.error().code(), ErrorCode::kInvalidArgument) << built.error().to_string();
  EXPECT_NE(built.error().to_string().find("kernel_choices entry '" + entry + "'"),
            std::string::npos)
      << built.error().to_string();
  EXPECT_EQ(be.selections().timed, 0u);
}

}  // namespace
}  // namespace hone::cuda
