// Per-op kernel selection (the select backend): each heavy node of a model is
// timed on every CPU backend that accepts it, the winner is recorded in the
// config (kernel_choices) and a build with those choices replays them. A
// backend's cell passes when its kernels took part in the selection of the
// model's heavy nodes, a placement that runs them there gives the right
// answer, and the recorded choice replays; the select column's cell when the
// selection happened and its result is right.
#include <set>
#include <sstream>

#include "functional/backends.h"
#include "functional/helpers.h"
#include "functional/matrix.h"
#include "functional/models/toy_models.h"

namespace hone::functional {
namespace {

class KernelSelection : public BackendTest {};

struct Entry {
  std::string node, winner;
  std::set<std::string> accepted;
};

std::vector<Entry> parse(const std::string& text) {
  std::vector<Entry> out;
  if (text == "-") return out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ';')) {
    Entry e;
    const size_t open = item.rfind('('), eq = item.rfind('=', open);
    e.node = item.substr(0, eq);
    e.winner = item.substr(eq + 1, open - eq - 1);
    std::stringstream acc(item.substr(open + 1, item.size() - open - 2));
    std::string a;
    while (std::getline(acc, a, '+')) e.accepted.insert(a);
    out.push_back(std::move(e));
  }
  return out;
}

Result<std::unique_ptr<Backend>> select_with(const std::string& choices, const Graph& g) {
  HONE_TRY(auto be, default_registry().create("select"));
  if (!choices.empty()) HONE_CHECK_OK(be->configure("kernel_choices", choices));
  HONE_CHECK_OK(be->build(g));
  return be;
}

HONE_MATRIX_TEST_P(KernelSelection, HeavyNodesAreTimedAndTheWinnerRecorded,
                   "kernels.per-op-selection") {
  const BackendCase& c = GetParam();
  if (c.key == kReferenceBackend)
    HONE_SKIP("the reference has one kernel per op: there is nothing to select among");
  if (c.has("gpu")) HONE_SKIP("per-op selection times the CPU backends (onednn, blas, aot)");
  if (default_registry().find("select") == nullptr)
    HONE_SKIP("this build has no select backend (it needs onednn)");
  Seeded s = seeded(47);
  Graph g = conv_net(s);  // Conv x2, Gemm
  const std::vector<Tensor> x = s.inputs(g, {{"batch", 2}});
  auto ref = default_registry().create(kReferenceBackend);
  ASSERT_TRUE(ref && (*ref)->build(g));
  auto want = (*ref)->infer(x);
  ASSERT_TRUE(want) << want.error().to_string();

  // Timed at build, recorded in the config.
  auto timed = select_with("", g);
  ASSERT_TRUE(timed) << timed.error().to_string();
  const std::string choices = (*timed)->config().get<std::string>("kernel_choices", "");
  const std::vector<Entry> entries = parse(choices);
  ASSERT_EQ(entries.size(), 3u) << "kernel_choices '" << choices << "'";
  auto got = (*timed)->infer(x);
  ASSERT_TRUE(got) << got.error().to_string();
  for (size_t i = 0; i < want->size(); ++i)
    EXPECT_TRUE(c.tolerance.assert_close((*got)[i], (*want)[i])) << "output " << i;

  // The recorded choice replays: same plan, same answer, nothing timed.
  auto replay = select_with(choices, g);
  ASSERT_TRUE(replay) << replay.error().to_string();
  EXPECT_EQ((*replay)->kernel_plan(), (*timed)->kernel_plan());
  EXPECT_EQ((*replay)->config().key(), (*timed)->config().key());
  auto again = (*replay)->infer(x);
  ASSERT_TRUE(again) << again.error().to_string();
  for (size_t i = 0; i < want->size(); ++i) EXPECT_TRUE((*again)[i].bitwise_equal((*got)[i]));
  if (c.key == "select") return;

  // This backend's kernels competed: it accepted some heavy node, and a
  // placement that runs every node it accepts on it is right too.
  std::string forced;
  size_t mine = 0;
  for (const Entry& e : entries) {
    const bool takes = e.accepted.contains(c.key);
    mine += takes ? 1 : 0;
    std::string acc;
    for (const std::string& a : e.accepted) acc += (acc.empty() ? "" : "+") + a;
    forced += (forced.empty() ? "" : ";") + e.node + "=" + (takes ? c.key : e.winner) + "(" + acc + ")";
  }
  if (mine == 0) HONE_SKIP(c.key + " accepts none of the model's heavy nodes: " + choices);
  auto placed = select_with(forced, g);
  ASSERT_TRUE(placed) << placed.error().to_string();
  size_t lines = 0;
  for (const std::string& line : (*placed)->kernel_plan())
    lines += line.find("-> " + c.key + " (per-op selection") != std::string::npos ? 1 : 0;
  EXPECT_EQ(lines, mine) << forced;
  auto out = (*placed)->infer(x);
  ASSERT_TRUE(out) << out.error().to_string();
  for (size_t i = 0; i < want->size(); ++i)
    EXPECT_TRUE(c.tolerance.assert_close((*out)[i], (*want)[i])) << "output " << i;
}

HONE_WITH_BACKENDS(KernelSelection);

}  // namespace
}  // namespace hone::functional
