// Tune's precision choice (TuneOptions::precision_auto) and mixed precision
// by bisection, on onednn's bf16 (CPUs with AVX-512 BF16). The model has a
// region known to fail in bf16: logits of magnitude ~500 (a large common
// offset, to which Softmax is blind) whose bf16 rounding moves each class by
// ~0.1, so the probabilities are wrong by ~10%; beside it, an MLP branch that
// bf16 computes well within its bound.
#include <unistd.h>
#include <algorithm>
#include <filesystem>
#include <random>

#include <gtest/gtest.h>

#include "hone/package.h"
#include "hone/registry.h"
#include "hone/tune.h"
#include "tune/mixed_precision_models.h"

namespace hone {
namespace {

namespace fs = std::filesystem;
using namespace mixed_test;  // NOLINT: the shared models

#define HONE_NEED_ONEDNN_BF16()                                             \
  do {                                                                      \
    const auto* e = default_registry().find("onednn");                      \
    if (e == nullptr) GTEST_SKIP() << "this build has no onednn";           \
    const auto& ps = e->capabilities.precisions;                            \
    if (std::find(ps.begin(), ps.end(), Precision::kBf16) == ps.end())      \
      GTEST_SKIP() << "onednn has no bf16 here; it needs "                  \
                   << e->capabilities.precision_needs.at(Precision::kBf16); \
  } while (0)

TEST(MixedPrecision, AutoTriesEveryPrecisionAndBisectionNamesTheLogitsMatMul) {
  HONE_NEED_ONEDNN_BF16();
  const Graph g = logits_model();
  TuneOptions o = options();
  o.precision_auto = true;
  auto tuned = tune(g, {sample(1, 1), sample(4, 2)}, MaxThroughput({"onednn"}), o);
  ASSERT_TRUE(tuned) << tuned.error().to_string();
  const TuneReport& r = tuned->report();
  // Every (backend, precision) pair is a row: fp32, the pure bf16 plan that
  // failed the gate, and the mixed plan that passed.
  const CandidateResult* fp32 = find(r, "onednn");
  const CandidateResult* pure = find(r, "onednn@bf16 (no fp32 nodes)");
  const CandidateResult* mixed = find(r, "onednn@bf16");
  ASSERT_TRUE(fp32 && pure && mixed) << r.table();
  EXPECT_EQ(fp32->precision, "fp32");
  EXPECT_TRUE(fp32->usable()) << r.table();
  EXPECT_EQ(pure->precision, "bf16");
  EXPECT_FALSE(pure->correctness.passed) << r.table();
  EXPECT_NE(pure->correctness.message.find("'probs'"), std::string::npos)
      << pure->correctness.message;
  EXPECT_NE(pure->lost_because.find("keeps 1 of"), std::string::npos) << pure->lost_because;
  // The search keeps exactly the MatMul of the logits in fp32; the MLP stays bf16.
  EXPECT_EQ(mixed->precision, "bf16");
  EXPECT_TRUE(mixed->usable()) << r.table();
  EXPECT_EQ(mixed->fp32_nodes, std::vector<std::string>{logits_matmul(g)}) << r.table();
  EXPECT_NE(r.table().find("fp32 nodes: " + logits_matmul(g)), std::string::npos) << r.table();
  auto back = TuneReport::from_json(r.json());
  ASSERT_TRUE(back) << back.error().to_string();
  const CandidateResult* read = find(*back, "onednn@bf16");
  ASSERT_NE(read, nullptr);
  EXPECT_EQ(read->fp32_nodes, mixed->fp32_nodes);
  EXPECT_EQ(read->precision, "bf16");
  EXPECT_NE(r.html().find("onednn@bf16"), std::string::npos);
  // Whichever won, its lost_because or reason is there for the other.
  EXPECT_TRUE(r.decision.chosen() == "onednn" || r.decision.chosen() == "onednn@bf16")
      << r.decision.chosen();
}

TEST(MixedPrecision, DefaultTriesFp32Only) {
  HONE_NEED_ONEDNN_BF16();
  auto tuned =
      tune(logits_model(), {sample(1, 1), sample(4, 2)}, MaxThroughput({"onednn"}), options());
  ASSERT_TRUE(tuned) << tuned.error().to_string();
  for (const auto& c : tuned->report().candidates)
    EXPECT_EQ(c.backend.find('@'), std::string::npos) << c.backend;
  EXPECT_EQ(tuned->backend().precision(), Precision::kFp32);
}

TEST(MixedPrecision, OneBackendUnderAutoTriesItsPrecisions) {
  HONE_NEED_ONEDNN_BF16();
  TuneOptions o = options();
  o.precision_auto = true;
  o.mixed_precision = false;  // the all-bf16 plan just fails
  auto tuned = tune(logits_model(), {sample(1, 1), sample(4, 2)}, OneBackend("onednn", false), o);
  ASSERT_TRUE(tuned) << tuned.error().to_string();
  const TuneReport& r = tuned->report();
  ASSERT_NE(find(r, "onednn"), nullptr);
  ASSERT_NE(find(r, "onednn@bf16"), nullptr);
  EXPECT_EQ(find(r, "onednn@bf16 (no fp32 nodes)"), nullptr);  // no search asked for
  EXPECT_FALSE(find(r, "onednn@bf16")->correctness.passed);
  EXPECT_EQ(r.decision.chosen(), "onednn");  // the one precision that passes
  EXPECT_NE(r.decision.losers.at("onednn@bf16").find("wrong results"), std::string::npos);
}

TEST(MixedPrecision, AnUnknownPrecisionInACandidateNameIsAFailedCandidate) {
  HONE_NEED_ONEDNN_BF16();
  auto tuned =
      tune(logits_model(), {sample(1, 1), sample(4, 2)}, MaxThroughput({"onednn@fp4"}), options());
  ASSERT_TRUE(tuned) << tuned.error().to_string();  // the reference is kept
  const CandidateResult* c = find(tuned->report(), "onednn@fp4");
  ASSERT_NE(c, nullptr);
  ASSERT_TRUE(c->error.has_value());
  EXPECT_NE(c->error->message().find("unknown precision 'fp4'"), std::string::npos)
      << c->error->to_string();
  EXPECT_EQ(tuned->decision().backend, "reference");
}

TEST(MixedPrecision, APrecisionAskedForInTheConfigIsSearchedToo) {
  HONE_NEED_ONEDNN_BF16();
  const Graph g = logits_model();
  TuneOptions o = options();
  o.configs["onednn"]["precision"] = "bf16";  // --config onednn.precision=bf16
  auto tuned = tune(g, {sample(1, 1), sample(4, 2)}, MaxThroughput({"onednn"}), o);
  ASSERT_TRUE(tuned) << tuned.error().to_string();
  const CandidateResult* c = find(tuned->report(), "onednn");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->precision, "bf16");
  EXPECT_EQ(c->fp32_nodes, std::vector<std::string>{logits_matmul(g)});
  EXPECT_NE(find(tuned->report(), "onednn (no fp32 nodes)"), nullptr);
}

TEST(MixedPrecision, PruningKeepsBothFailingHeadsAndDropsWhatLiesBetween) {
  HONE_NEED_ONEDNN_BF16();
  const Graph g = two_heads_model();
  auto tuned = tune(g, {sample(1, 1), sample(4, 2)}, MaxThroughput({"onednn@bf16"}), options());
  ASSERT_TRUE(tuned) << tuned.error().to_string();
  const CandidateResult* c = find(tuned->report(), "onednn@bf16");
  ASSERT_NE(c, nullptr);
  EXPECT_TRUE(c->usable()) << tuned->report().table();
  std::vector<std::string> want{matmul_reading(g, "wbig1"), matmul_reading(g, "wbig2")};
  std::vector<std::string> got = c->fp32_nodes;
  std::sort(want.begin(), want.end());
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, want) << tuned->report().table();
}

TEST(MixedPrecision, AWarmCacheKeepsTheMixedPlan) {
  HONE_NEED_ONEDNN_BF16();
  const Graph g = logits_model();
  const fs::path dir = fs::temp_directory_path() / ("hone-mixed-cache-" + std::to_string(getpid()));
  fs::create_directories(dir);
  TuneOptions o = options();
  o.use_cache = true;
  o.cache_path = dir / "tuning.db";
  const std::vector<Sample> samples{sample(1, 1), sample(4, 2)};
  auto first = tune(g, samples, MaxThroughput({"onednn@bf16"}), o);
  auto second = tune(g, samples, MaxThroughput({"onednn@bf16"}), o);
  fs::remove_all(dir);
  ASSERT_TRUE(first && second);
  EXPECT_EQ(second->report().cache_hits, 1);
  const CandidateResult* c = find(second->report(), "onednn@bf16");
  ASSERT_NE(c, nullptr);
  EXPECT_TRUE(c->from_cache);
  EXPECT_EQ(c->fp32_nodes, std::vector<std::string>{logits_matmul(g)});
  // The winner is built again from the cached figures, with its fp32 nodes.
  EXPECT_EQ(second->backend().fp32_nodes(), std::vector<std::string>{logits_matmul(g)});
}

TEST(MixedPrecision, ThePackageReplaysThePrecisionAndTheFp32Nodes) {
  HONE_NEED_ONEDNN_BF16();
  const Graph g = logits_model();
  // One candidate at bf16, named as --precision auto names it.
  auto tuned = tune(g, {sample(1, 1), sample(4, 2)}, MaxThroughput({"onednn@bf16"}), options());
  ASSERT_TRUE(tuned) << tuned.error().to_string();
  const Decision& d = tuned->decision();
  ASSERT_EQ(d.backend, "onednn") << tuned->report().table();
  EXPECT_EQ(d.chosen(), "onednn@bf16");
  EXPECT_NE(d.reason.find("nodes kept in fp32: " + logits_matmul(g)), std::string::npos)
      << d.reason;
  const fs::path file =
      fs::temp_directory_path() / ("hone-mixed-" + std::to_string(getpid()) + ".hone");
  ASSERT_TRUE(save(*tuned, file));
  auto loaded = load(file);
  fs::remove(file);
  ASSERT_TRUE(loaded) << loaded.error().to_string();
  EXPECT_EQ(loaded->backend().precision(), Precision::kBf16);
  EXPECT_EQ(loaded->backend().fp32_nodes(), std::vector<std::string>{logits_matmul(g)});
  EXPECT_EQ(loaded->decision().chosen(), "onednn@bf16");
  // Same plan, same bits; the products but the logits' run in bf16.
  std::string plan;
  std::mt19937 rng(7);
  const std::vector<Tensor> x{uniform(rng, {3, 256}, 0.0f, 1.0f)};
  auto a = tuned->infer_flat(x), b = loaded->infer_flat(x);
  ASSERT_TRUE(a && b);
  for (const auto& l : loaded->backend().describe_kernels()) plan += l + "\n";
  EXPECT_NE(plan.find("matmul[bf16]"), std::string::npos) << plan;
  EXPECT_NE(plan.find(", matmul,"), std::string::npos) << plan;  // the logits, in f32
  ASSERT_EQ(a->size(), b->size());
  for (size_t i = 0; i < a->size(); ++i)
    EXPECT_TRUE(std::equal((*a)[i].span<float>().begin(), (*a)[i].span<float>().end(),
                           (*b)[i].span<float>().begin()))
        << "output " << i;
}

}  // namespace
}  // namespace hone
