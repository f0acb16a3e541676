// Tests of the harness itself: template expansion, aggregation order, the
// BACKENDS table check, and the page's merge and validation.
#include <gtest/gtest.h>

#include "functional/backends.h"
#include "functional/matrix.h"
#include "hone-matrix/matrix_page.h"

namespace hone::functional {
namespace {

using nlohmann::json;

TEST(MatrixHarness, TemplatesExpand) {
  EXPECT_EQ(expand_cell_template("lifecycle.infer", {{"backend", "onednn"}}),
            "lifecycle.infer/onednn");
  EXPECT_EQ(expand_cell_template("topology.{backend}/single-device", {{"backend", "blas"}}),
            "topology.blas/single-device");
  EXPECT_EQ(expand_cell_template("onnx.inline-weights/reference", {{"backend", "x"}}),
            "onnx.inline-weights/reference");
  // Unresolved placeholders stay visible, so resolution reports them as unknown.
  EXPECT_EQ(expand_cell_template("lifecycle.infer", {}), "lifecycle.infer/{backend}");
}

TEST(MatrixHarness, WorstResultWins) {
  std::map<std::string, CellResult> cells;
  record_cell(cells, "a/x", Outcome::kPassed, "", "T.one");
  record_cell(cells, "a/x", Outcome::kSkipped, "no CUDA device", "T.two");
  EXPECT_EQ(cells["a/x"].outcome, Outcome::kSkipped);
  record_cell(cells, "a/x", Outcome::kPassed, "", "T.three");
  EXPECT_EQ(cells["a/x"].outcome, Outcome::kSkipped);
  record_cell(cells, "a/x", Outcome::kFailed, "boom", "T.four");
  EXPECT_EQ(cells["a/x"].outcome, Outcome::kFailed);
  ASSERT_EQ(cells["a/x"].reasons.size(), 1u);
  EXPECT_EQ(cells["a/x"].reasons[0], "boom");
  EXPECT_EQ(cells["a/x"].tests.size(), 4u);
  EXPECT_EQ(matrix::worst(matrix::CellStatus::kPassed, matrix::CellStatus::kSkipped),
            matrix::CellStatus::kSkipped);
  EXPECT_EQ(matrix::worst(matrix::CellStatus::kFailed, matrix::CellStatus::kSkipped),
            matrix::CellStatus::kFailed);
}

TEST(MatrixHarness, TableMustMatchRegistry) {
  BackendRegistry reg;
  ASSERT_TRUE(reg.add({"alpha", "", {}, nullptr, {}}));
  std::vector<BackendCase> rows = {{"alpha", nullptr, {}, {"export"}, ""},
                                   {"ghost", nullptr, {}, {}, ""}};
  auto problems = check_backend_table(reg, rows, {"alpha", "ghost"});
  std::string all;
  for (const auto& p : problems) all += p + "\n";
  EXPECT_NE(all.find("'ghost' has no registered backend"), std::string::npos) << all;
  EXPECT_NE(all.find("'alpha' declares 'export' without an artifact_format"), std::string::npos)
      << all;
  ASSERT_TRUE(reg.add({"beta", "", {}, nullptr, {}}));
  problems = check_backend_table(reg, {{"alpha", nullptr, {}, {}, ""}}, {"alpha"});
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("'beta' has no BACKENDS row"), std::string::npos);
}

json tiny_features() {
  return json::parse(R"({"backends": ["a", "b"], "tabs": [
      {"id": "t", "columns": "backends", "rows": [{"id": "r1"}, {"id": "r2"}]},
      {"id": "topo", "columns": ["one", "two"], "rows": "backends"}]})");
}

TEST(MatrixPage, MergeKeepsUntouchedCellsAndValidates) {
  auto data = matrix::data_from_features(tiny_features());
  ASSERT_TRUE(data) << data.error().to_string();
  EXPECT_EQ(matrix::cell_ids(*data).size(), 8u);
  EXPECT_TRUE(matrix::cell_ids(*data).count("topo.b/two"));
  json up = {{"cells",
              {{"t.r1/a", {{"status", "passed"}, {"tests", {"X.y"}}}},
               {"topo.a/one", {{"status", "skipped"}, {"reason", "no CUDA device"}}}}}};
  auto merged = matrix::merge_updates(*data, up);
  ASSERT_TRUE(merged) << merged.error().to_string();
  EXPECT_EQ((*merged)["cells"]["t.r1/a"]["status"], "passed");
  EXPECT_EQ((*merged)["cells"]["t.r2/b"]["status"], "untested");
  // A second run that only touches another cell keeps the first result.
  auto again = matrix::merge_updates(*merged, {{"cells", {{"t.r2/b", {{"status", "failed"}}}}}});
  ASSERT_TRUE(again);
  EXPECT_EQ((*again)["cells"]["t.r1/a"]["status"], "passed");
  EXPECT_EQ(matrix::summary(*again), "matrix: 1 passed, 1 skipped, 1 failed, 5 untested (8 cells)");

  auto unknown = matrix::merge_updates(*data, {{"cells", {{"t.nope/a", {{"status", "passed"}}}}}});
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message().find("Unknown feature-matrix cell IDs: t.nope/a"),
            std::string::npos);
  auto bad_status = matrix::merge_updates(*data, {{"cells", {{"t.r1/a", {{"status", "great"}}}}}});
  ASSERT_FALSE(bad_status);
  auto reasonless =
      matrix::merge_updates(*data, {{"cells", {{"t.r1/a", {{"status", "skipped"}}}}}});
  ASSERT_FALSE(reasonless);
  EXPECT_NE(reasonless.error().to_string().find("without a reason"), std::string::npos);
}

TEST(MatrixPage, ABackendsCellsFromAnotherMachineCarryTheirProvenance) {
  auto data = matrix::data_from_features(tiny_features());
  ASSERT_TRUE(data);
  // The local run skipped backend b (no device there).
  auto local = matrix::merge_updates(
      *data, {{"cells",
               {{"t.r1/b", {{"status", "skipped"}, {"reason", "no CUDA device"}}},
                {"t.r1/a", {{"status", "passed"}}}}}});
  ASSERT_TRUE(local);
  json gpu = {{"run",
               {{"device", "NVIDIA H200"},
                {"driver", "580.1"},
                {"commit", "abc1234"},
                {"time", "2026-12-03T18:00:00Z"}}},
              {"cells",
               {{"t.r1/b", {{"status", "passed"}}},
                {"topo.b/one", {{"status", "skipped"}, {"reason", "one GPU"}}},
                {"t.r1/a", {{"status", "failed"}}}}}};
  auto merged = matrix::merge_backend_from(*local, gpu, "b");
  ASSERT_TRUE(merged) << merged.error().to_string();
  EXPECT_EQ((*merged)["cells"]["t.r1/b"]["status"], "passed");
  EXPECT_EQ((*merged)["cells"]["t.r1/b"]["source"],
            "run on NVIDIA H200, driver 580.1, commit abc1234, time 2026-12-03T18:00:00Z");
  EXPECT_EQ((*merged)["cells"]["topo.b/one"]["status"], "skipped")
      << "b's row in a backends-rows tab";
  EXPECT_EQ((*merged)["cells"]["t.r1/a"]["status"], "passed")
      << "another backend's cell is not taken";
  EXPECT_FALSE((*merged)["cells"]["t.r1/a"].contains("source"));
  EXPECT_NE(matrix::render_page(*merged).find("run on NVIDIA H200"), std::string::npos);

  json no_driver = gpu;
  no_driver["run"].erase("driver");
  auto r = matrix::merge_backend_from(*local, no_driver, "b");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("lacks 'driver'"), std::string::npos) << r.error().message();
  auto none = matrix::merge_backend_from(*local, gpu, "zzz");
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message().find("no cell of backend 'zzz'"), std::string::npos);
}

TEST(MatrixPage, PageRoundTripsItsData) {
  auto data = matrix::data_from_features(tiny_features());
  ASSERT_TRUE(data);
  (*data)["cells"]["t.r1/a"] = {{"status", "skipped"}, {"reason", "a </script> in a reason"}};
  const std::string html = matrix::render_page(*data);
  EXPECT_EQ(html.find("a </script> in"), std::string::npos)
      << "JSON must not close its script block";
  auto back = matrix::extract_data(html);
  ASSERT_TRUE(back) << back.error().to_string();
  EXPECT_EQ(*back, *data);
  auto broken = matrix::extract_data("<html>no data</html>");
  ASSERT_FALSE(broken);
  EXPECT_EQ(broken.error().code(), ErrorCode::kCorrupt);
}

}  // namespace
}  // namespace hone::functional
