// The liveness-based arena layout (backends/common/arena_layout.h): hand-made blocks with known
// answers, then random blocks checked for the invariants every plan must keep.
#include "backends/common/arena_layout.h"

#include <random>

#include <gtest/gtest.h>

namespace hone {
namespace {

constexpr size_t kKiB = 1024;

ArenaStep step(std::vector<int> reads, std::vector<int> writes,
               std::vector<std::pair<int, int>> in_place = {}, size_t scratch = 0) {
  ArenaStep s;
  s.reads = std::move(reads);
  s.writes = std::move(writes);
  s.in_place = std::move(in_place);
  s.scratch_bytes = scratch;
  return s;
}

bool bytes_overlap(const ArenaLayout& m, const ArenaProblem& p, size_t a, size_t b) {
  const size_t ea = m.offsets[a] + p.values[a].bytes, eb = m.offsets[b] + p.values[b].bytes;
  return m.offsets[a] < eb && m.offsets[b] < ea;
}

int group_of(const ArenaLayout& m, int v) {
  while (m.in_place_of[static_cast<size_t>(v)] >= 0) v = m.in_place_of[static_cast<size_t>(v)];
  return v;
}

/// Every invariant a plan of `p` must keep; fails the test naming the first broken one.
void expect_sound(const ArenaProblem& p, const ArenaLayout& m) {
  const size_t nv = p.values.size();
  ASSERT_EQ(m.offsets.size(), nv);
  for (size_t v = 0; v < nv; ++v) {
    if (p.values[v].external) {
      EXPECT_EQ(m.offsets[v], ArenaLayout::kNotPlaced) << "external value " << v << " was placed";
      EXPECT_EQ(m.in_place_of[v], -1);
      continue;
    }
    if (m.offsets[v] == ArenaLayout::kNotPlaced) continue;
    EXPECT_EQ(m.offsets[v] % p.alignment, 0u) << "value " << v;
    EXPECT_LE(m.offsets[v] + p.values[v].bytes, m.arena_bytes) << "value " << v;
  }
  // Two arena values live during one step never share a byte, unless one
  // took the other's buffer over in place.
  for (size_t a = 0; a < nv; ++a)
    for (size_t b = a + 1; b < nv; ++b) {
      if (m.offsets[a] == ArenaLayout::kNotPlaced || m.offsets[b] == ArenaLayout::kNotPlaced)
        continue;
      const auto [fa, la] = m.lifetimes[a];
      const auto [fb, lb] = m.lifetimes[b];
      if (fa > lb || fb > la) continue;
      if (group_of(m, static_cast<int>(a)) == group_of(m, static_cast<int>(b))) continue;
      EXPECT_FALSE(bytes_overlap(m, p, a, b))
          << "values " << a << " and " << b << " are both live and share bytes";
    }
  // In place only where safe: the input dies at the step that writes the
  // output, sizes match, and the step declared the pair.
  for (size_t w = 0; w < nv; ++w) {
    const int r = m.in_place_of[w];
    if (r < 0) continue;
    const size_t ur = static_cast<size_t>(r);
    EXPECT_EQ(m.lifetimes[ur].second, m.lifetimes[w].first) << "value " << r << " outlives " << w;
    EXPECT_EQ(p.values[ur].bytes, p.values[w].bytes);
    EXPECT_FALSE(p.values[ur].external);
    const ArenaStep& s = p.steps[static_cast<size_t>(m.lifetimes[w].first)];
    EXPECT_NE(std::find(s.in_place.begin(), s.in_place.end(), std::pair<int, int>(r, int(w))),
              s.in_place.end())
        << "value " << w << " written over " << r << " without being declared";
  }
  // Scratch never overlaps a value live during its step.
  for (size_t s = 0; s < p.steps.size(); ++s) {
    if (p.steps[s].scratch_bytes == 0) continue;
    const size_t so = m.scratch_offsets[s], se = so + p.steps[s].scratch_bytes;
    EXPECT_LE(se, m.arena_bytes);
    for (size_t v = 0; v < nv; ++v) {
      if (m.offsets[v] == ArenaLayout::kNotPlaced) continue;
      const auto [f, l] = m.lifetimes[v];
      if (f > static_cast<int>(s) || l < static_cast<int>(s)) continue;
      EXPECT_FALSE(m.offsets[v] < se && so < m.offsets[v] + p.values[v].bytes)
          << "scratch of step " << s << " overlaps value " << v;
    }
  }
  EXPECT_LE(m.arena_bytes, m.naive_bytes);
  EXPECT_GE(m.arena_bytes, m.live_bytes);
}

TEST(ArenaLayout, ChainReusesTwoBuffers) {
  // x(ext) -> a -> b -> c -> d -> y(ext): at most two temporaries live at once.
  ArenaProblem p;
  p.values = {{4 * kKiB, true}, {4 * kKiB}, {4 * kKiB}, {4 * kKiB}, {4 * kKiB}, {4 * kKiB, true}};
  p.steps = {step({0}, {1}), step({1}, {2}), step({2}, {3}), step({3}, {4}), step({4}, {5})};
  auto m = lay_out(p);
  ASSERT_TRUE(m) << m.error().to_string();
  expect_sound(p, *m);
  EXPECT_EQ(m->naive_bytes, 16 * kKiB);
  EXPECT_EQ(m->arena_bytes, 8 * kKiB);
  EXPECT_EQ(m->live_bytes, 8 * kKiB);
  EXPECT_EQ(m->offsets[1], m->offsets[3]);
  EXPECT_NE(m->offsets[1], m->offsets[2]);
  EXPECT_EQ(m->in_place_count, 0);
}

TEST(ArenaLayout, ElementwiseChainRunsInOneBuffer) {
  // a -> relu -> b -> add(b, bias) -> c, both in place: one buffer.
  ArenaProblem p;
  p.values = {{4 * kKiB, true}, {64 * kKiB}, {64 * kKiB}, {64 * kKiB}, {64, true}, {64, true}};
  p.steps = {step({0}, {1}), step({1}, {2}, {{1, 2}}), step({2, 4}, {3}, {{2, 3}}), step({3}, {5})};
  auto m = lay_out(p);
  ASSERT_TRUE(m) << m.error().to_string();
  expect_sound(p, *m);
  EXPECT_EQ(m->in_place_count, 2);
  EXPECT_EQ(m->in_place_of[2], 1);
  EXPECT_EQ(m->in_place_of[3], 2);
  EXPECT_EQ(m->arena_bytes, 64 * kKiB);
  EXPECT_EQ(m->naive_bytes, 192 * kKiB);
}

TEST(ArenaLayout, InPlaceRefusedWhereUnsafe) {
  ArenaProblem p;
  // 0 ext input; 1 temp read again later (a residual); 2 wants 1's bytes but
  // 1 is read by step 3; 3 wants the external input's bytes; 4 a different
  // size; 5 output.
  p.values = {{1 * kKiB, true}, {1 * kKiB}, {1 * kKiB}, {1 * kKiB}, {2 * kKiB}, {2 * kKiB, true}};
  p.steps = {step({0}, {1}), step({1}, {2}, {{1, 2}}), step({0, 1, 2}, {3}, {{0, 3}, {1, 3}}),
             step({3}, {4}, {{3, 4}}), step({4}, {5}, {{4, 5}})};
  auto m = lay_out(p);
  ASSERT_TRUE(m) << m.error().to_string();
  expect_sound(p, *m);
  EXPECT_EQ(m->in_place_of[2], -1) << "value 1 is read after step 1";
  EXPECT_EQ(m->in_place_of[3], 1) << "the first safe pair wins; value 0 is external";
  EXPECT_EQ(m->in_place_of[4], -1) << "sizes differ";
  EXPECT_EQ(m->in_place_of[5], -1) << "outputs are external";
  EXPECT_EQ(m->in_place_count, 1);
}

TEST(ArenaLayout, ScratchSharesBytesWithDeadValues) {
  // Step 2's scratch can reuse value 0's bytes, dead after step 1.
  ArenaProblem p;
  p.values = {{8 * kKiB}, {8 * kKiB}, {8 * kKiB}, {8 * kKiB, true}};
  p.steps = {step({}, {0}), step({0}, {1}), step({1}, {2}, {}, 8 * kKiB), step({2}, {3})};
  auto m = lay_out(p);
  ASSERT_TRUE(m) << m.error().to_string();
  expect_sound(p, *m);
  EXPECT_EQ(m->arena_bytes, 24 * kKiB);  // value 1, value 2 and the scratch are live at step 2
  EXPECT_EQ(m->naive_bytes, 32 * kKiB);
  EXPECT_NE(m->scratch_offsets[2], ArenaLayout::kNotPlaced);
  EXPECT_EQ(m->scratch_offsets[0], ArenaLayout::kNotPlaced);
}

TEST(ArenaLayout, UnreadValueLivesOneStepAndSizesAreAligned) {
  ArenaProblem p;
  p.values = {{10}, {10}, {10}};
  p.steps = {step({}, {0, 1}), step({0}, {2})};  // 1 is never read
  auto m = lay_out(p);
  ASSERT_TRUE(m) << m.error().to_string();
  expect_sound(p, *m);
  EXPECT_EQ(m->lifetimes[1], std::make_pair(0, 0));
  EXPECT_EQ(m->naive_bytes, 3 * 64u);
  EXPECT_EQ(m->arena_bytes, 2 * 64u);  // 2 reuses 1's bytes
  EXPECT_EQ(m->offsets[1], m->offsets[2]);
}

TEST(ArenaLayout, BadProblemsNameTheStepAndValue) {
  ArenaProblem p;
  p.values = {{64}, {64}};
  p.steps = {step({0}, {1})};
  auto m = lay_out(p);
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(m.error().message().find("step 0 reads value 0 before any step writes it"),
            std::string::npos)
      << m.error().message();

  p.steps = {step({}, {0}), step({}, {0})};
  m = lay_out(p);
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().message().find("written by step 0 and again by step 1"), std::string::npos);

  p.steps = {step({}, {7})};
  m = lay_out(p);
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().message().find("value 7"), std::string::npos);

  p.steps = {step({}, {0}), step({0}, {1}, {{1, 0}})};
  m = lay_out(p);
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().message().find("does not read the first"), std::string::npos);

  p.alignment = 48;
  p.steps = {step({}, {0})};
  m = lay_out(p);
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().message().find("alignment 48"), std::string::npos);
}

ArenaProblem random_problem(std::mt19937& rng) {
  std::uniform_int_distribution<int> nsteps(1, 24), kb(1, 64), coin(0, 3);
  ArenaProblem p;
  const int n_ext = 1 + coin(rng) % 2;
  for (int i = 0; i < n_ext; ++i) p.values.push_back({static_cast<size_t>(kb(rng)) * 100, true});
  const int steps = nsteps(rng);
  std::vector<int> made;
  for (int i = 0; i < n_ext; ++i) made.push_back(i);
  for (int s = 0; s < steps; ++s) {
    ArenaStep st;
    std::uniform_int_distribution<size_t> pick(0, made.size() - 1);
    const int nreads = 1 + coin(rng) % 3;
    for (int r = 0; r < nreads; ++r) {
      // Mostly the latest value (a chain), sometimes an older one (a skip).
      const int v = coin(rng) == 0 ? made[pick(rng)] : made.back();
      if (std::find(st.reads.begin(), st.reads.end(), v) == st.reads.end()) st.reads.push_back(v);
    }
    const int nwrites = 1 + (coin(rng) == 0 ? 1 : 0);
    for (int w = 0; w < nwrites; ++w) {
      const int v = static_cast<int>(p.values.size());
      const bool same = coin(rng) != 0;  // element-wise: the size of its input
      const size_t bytes = same ? p.values[static_cast<size_t>(st.reads[0])].bytes
                                : static_cast<size_t>(kb(rng)) * 100;
      p.values.push_back({bytes, s == steps - 1 && w == 0});
      st.writes.push_back(v);
      if (same) st.in_place.emplace_back(st.reads[0], v);
      made.push_back(v);
    }
    if (coin(rng) == 0) st.scratch_bytes = static_cast<size_t>(kb(rng)) * 50;
    p.steps.push_back(std::move(st));
  }
  return p;
}

TEST(ArenaLayout, RandomBlocksKeepEveryInvariantAndAreDeterministic) {
  std::mt19937 rng(1234);
  int saved = 0, in_place = 0;
  for (int i = 0; i < 300; ++i) {
    const ArenaProblem p = random_problem(rng);
    auto m = lay_out(p);
    ASSERT_TRUE(m) << "problem " << i << ": " << m.error().to_string();
    SCOPED_TRACE("problem " + std::to_string(i));
    expect_sound(p, *m);
    if (::testing::Test::HasFailure()) return;
    auto again = lay_out(p);
    ASSERT_TRUE(again);
    EXPECT_EQ(again->offsets, m->offsets);
    EXPECT_EQ(again->scratch_offsets, m->scratch_offsets);
    EXPECT_EQ(again->arena_bytes, m->arena_bytes);
    saved += m->arena_bytes < m->naive_bytes;
    in_place += m->in_place_count;
  }
  // The generator makes chains: planning must actually save, and take some pairs in place.
  EXPECT_GT(saved, 200);
  EXPECT_GT(in_place, 100);
}

}  // namespace
}  // namespace hone
