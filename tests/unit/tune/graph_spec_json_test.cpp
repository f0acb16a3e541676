#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "hone/graph_spec.h"
#include "spec_test_models.h"

namespace hone {
namespace {

using namespace spec_test;
using nlohmann::json;

GraphSpec nested_spec() {
  auto spec = GraphSpec::learn(nested_model(), {nested_sample(1), nested_sample(4)},
                               {*parse_dim_declaration("batch=1:2:16")});
  EXPECT_TRUE(spec) << spec.error().to_string();
  return *spec;
}

TEST(GraphSpecJson, RoundTripsExactly) {
  for (const GraphSpec& spec :
       {nested_spec(), *GraphSpec::learn(seq_model(false), seq_samples())}) {
    const std::string text = spec.to_json();
    auto back = GraphSpec::from_json(text);
    ASSERT_TRUE(back) << back.error().to_string() << "\n" << text;
    EXPECT_EQ(*back, spec);
    EXPECT_EQ(back->to_json(), text);
    EXPECT_EQ(back->key(), spec.key());
  }
}

TEST(GraphSpecJson, KeysAreSortedAndTheKeyIsStable) {
  const GraphSpec spec = nested_spec();
  const std::string text = spec.to_json();
  EXPECT_LT(text.find("\"batch_dim\""), text.find("\"bounds\""));
  EXPECT_LT(text.find("\"bounds\""), text.find("\"inputs\""));
  EXPECT_EQ(spec.key().size(), 16u);
  EXPECT_EQ(spec.key().find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(spec.key(), nested_spec().key());
  GraphSpec changed = spec;
  changed.bounds["batch"].max = 17;
  EXPECT_NE(changed.key(), spec.key());
}

TEST(GraphSpecJson, CorruptTextSaysWhatIsWrong) {
  const json good = json::parse(nested_spec().to_json());
  struct Case {
    std::string what;
    std::function<void(json&)> edit;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {"format", [](json& j) { j["format"] = "other"; }, "format is 'other'"},
      {"version", [](json& j) { j["version"] = 99; }, "version 99 is not supported"},
      {"missing inputs", [](json& j) { j.erase("inputs"); }, "inputs is missing"},
      {"dims type", [](json& j) { j["inputs"][0]["dims"] = "x"; },
       "inputs[0].dims is not an array"},
      {"dim kind", [](json& j) { j["inputs"][0]["dims"][1]["kind"] = "wobbly"; },
       "inputs[0].dims[1].kind 'wobbly'"},
      {"size type", [](json& j) { j["inputs"][0]["dims"][1]["size"] = "4"; },
       "inputs[0].dims[1].size is not an integer"},
      {"dtype", [](json& j) { j["outputs"][1]["dtype"] = "f33"; }, "outputs[1].dtype 'f33'"},
      {"bounds order", [](json& j) { j["bounds"]["batch"]["min"] = 40; },
       "dim 'batch' has bounds 40:2:16"},
      {"missing bound", [](json& j) { j["bounds"].erase("batch"); }, "has no bounds"},
      {"batch axis", [](json& j) { j["inputs"][0]["batch_axis"] = 1; }, "has batch_axis 1"},
      {"batch name", [](json& j) { j["batch_dim"] = "seq"; }, "batch axis named 'batch'"},
      {"path conflict", [](json& j) { j["inputs"][1]["path"] = "image.x"; }, "conflict"},
      {"bad path", [](json& j) { j["inputs"][1]["path"] = "a..b"; }, "path 'a..b'"},
      {"duplicate input", [](json& j) { j["inputs"][1]["name"] = "image"; },
       "input 'image' appears twice"},
      {"scalar with dims", [](json& j) { j["inputs"][0]["scalar_leaf"] = true; },
       "is a number leaf but has dims"},
      {"huge", [](json& j) { j["bounds"]["batch"]["max"] = 18446744073709551615ull; },
       "bounds.batch.max is too large"},
  };
  for (const Case& c : cases) {
    json j = good;
    c.edit(j);
    auto r = GraphSpec::from_json(j.dump());
    ASSERT_FALSE(r) << c.what;
    EXPECT_EQ(r.error().code(), ErrorCode::kCorrupt) << c.what;
    EXPECT_TRUE(contains(r.error().message(), c.expect)) << c.what << ": " << r.error().message();
  }
  for (const char* text : {"", "{", "[]", "42", "{\"format\": 1}"}) {
    auto r = GraphSpec::from_json(text);
    ASSERT_FALSE(r) << text;
    EXPECT_EQ(r.error().code(), ErrorCode::kCorrupt) << text;
  }
}

TEST(GraphSpecJson, DescribeListsPathsTypesAndBounds) {
  const std::string d = nested_spec().describe();
  EXPECT_TRUE(contains(d, "inputs (4):")) << d;
  EXPECT_TRUE(contains(d, "meta.masks[1]")) << d;
  EXPECT_TRUE(contains(d, "f32[batch,4]  batch axis 0")) << d;
  EXPECT_TRUE(contains(d, "f32 (number)")) << d;
  EXPECT_TRUE(contains(d, "outputs (3):")) << d;
  EXPECT_TRUE(contains(d, "boxes.xy")) << d;
  EXPECT_TRUE(contains(d, "min 1  opt 2  max 16  (batch)")) << d;
}

}  // namespace
}  // namespace hone
