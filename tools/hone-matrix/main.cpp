// hone-matrix: builds and updates the feature-matrix page.
//
//   hone-matrix render tests/functional/features.json -o tests/functional/feature_matrix.html
//   hone-matrix update BASE.html UPDATES.json -o OUT.html   # keeps cells the run did not touch
//   hone-matrix update BASE.html GPU.json --backend cuda -o OUT.html  # that backend's cells only,
//                                                                    # stamped with GPU.json's run
//   hone-matrix summary PAGE.html                           # one line of totals
//   hone-matrix check PAGE.html FEATURES.json               # page matches the feature list
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <CLI/CLI.hpp>

#include "hone-matrix/matrix_page.h"
#include "hone/file_io.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

hone::Result<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return hone::fail(hone::ErrorCode::kNotFound, "cannot open '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

hone::Result<json> read_json(const std::string& path) {
  HONE_TRY(std::string text, read_file(path));
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded())
    return hone::fail(hone::ErrorCode::kCorrupt, "'" + path + "' is not valid JSON");
  return j;
}

int report(const hone::Result<void>& r) {
  if (r) return 0;
  std::fprintf(stderr, "error: %s\n", r.error().to_string().c_str());
  return 1;
}

hone::Result<void> run_render(const std::string& features, const std::string& out) {
  HONE_TRY(json f, read_json(features));
  HONE_TRY(json data, hone::matrix::data_from_features(f));
  return hone::write_file_atomic(out, hone::matrix::render_page(data));
}

hone::Result<void> run_update(const std::string& base, const std::string& updates,
                              const std::string& out, const std::string& column) {
  HONE_TRY(std::string html, read_file(base));
  HONE_TRY(json data, hone::matrix::extract_data(html));
  HONE_TRY(json u, read_json(updates));
  HONE_TRY(json merged, column.empty() ? hone::matrix::merge_updates(data, u)
                                       : hone::matrix::merge_backend_from(data, u, column));
  HONE_CHECK_OK(hone::write_file_atomic(out, hone::matrix::render_page(merged)));
  std::printf("%s\n", hone::matrix::summary(merged).c_str());
  return {};
}

hone::Result<void> run_summary(const std::string& page) {
  HONE_TRY(std::string html, read_file(page));
  HONE_TRY(json data, hone::matrix::extract_data(html));
  std::printf("%s\n", hone::matrix::summary(data).c_str());
  return {};
}

hone::Result<void> run_check(const std::string& page, const std::string& features) {
  HONE_TRY(std::string html, read_file(page));
  HONE_TRY(json data, hone::matrix::extract_data(html));
  HONE_TRY(json f, read_json(features));
  HONE_TRY(json fresh, hone::matrix::data_from_features(f));
  if (hone::matrix::cell_ids(fresh) != hone::matrix::cell_ids(data))
    return hone::fail(hone::ErrorCode::kCorrupt,
                      "'" + page + "' does not have the cells '" + features +
                          "' defines; re-render it with `hone-matrix render`");
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"hone-matrix: build, update and summarize the feature-matrix page"};
  app.require_subcommand(1);
  std::string a, b, out, column;
  auto* render =
      app.add_subcommand("render", "page with every cell untested, from a features file");
  render->add_option("features", a, "features.json")->required()->check(CLI::ExistingFile);
  render->add_option("-o,--output", out, "page to write")->required();
  auto* update = app.add_subcommand("update", "merge a run's cell updates into a copy of a page");
  update->add_option("base", a, "base page")->required()->check(CLI::ExistingFile);
  update->add_option("updates", b, "updates JSON (HONE_MATRIX_RESULTS of a run)")->required();
  update->add_option("-o,--output", out, "page to write")->required();
  update->add_option("--backend", column,
                     "take only this backend's cells, from a run made elsewhere whose 'run' says "
                     "device, driver, commit and time (e.g. cuda, from the GPU machine)");
  auto* summary = app.add_subcommand("summary", "print the totals of a page");
  summary->add_option("page", a, "page")->required()->check(CLI::ExistingFile);
  auto* check = app.add_subcommand(
      "check", "check that a page has exactly the cells a features file defines");
  check->add_option("page", a, "page")->required()->check(CLI::ExistingFile);
  check->add_option("features", b, "features.json")->required()->check(CLI::ExistingFile);
  CLI11_PARSE(app, argc, argv);
  if (*render) return report(run_render(a, out));
  if (*update) return report(run_update(a, b, out, column));
  if (*summary) return report(run_summary(a));
  return report(run_check(a, b));
}
