// Small models and samples the GraphSpec tests share.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hone/graph_builder.h"
#include "hone/graph_spec.h"
#include "hone/sample.h"

namespace hone::spec_test {

/// GraphBuilder infers no types; models imported from ONNX carry them, so the
/// test models declare their outputs' types as an importer would.
inline void set_output_type(Graph& g, size_t i, Shape shape) {
  Value& v = g.value(g.outputs()[i]);
  v.dtype = DType::kF32;
  v.shape = std::move(shape);
}

inline Tensor iota(std::vector<int64_t> shape, float start = 0) {
  Tensor t = Tensor::zeros(DType::kF32, std::move(shape));
  float v = start;
  for (float& x : t.span<float>()) x = v++;
  return t;
}

/// Inputs named by their tree paths: image f32[batch,4], meta.masks[0..1]
/// f32[batch,4], meta.scale f32 (0-d). Outputs named as paths:
/// boxes.xy = image*scale + masks[0], boxes.wh = masks[1]*scale, logits = image + masks[1].
inline Graph nested_model(const std::vector<std::string>& input_names = {
                              "image", "meta.masks[0]", "meta.masks[1]", "meta.scale"}) {
  GraphBuilder b("nested");
  const Shape bx{Dim::symbol("batch"), 4};
  ValueId image = b.input(input_names[0], DType::kF32, bx);
  ValueId m0 = b.input(input_names[1], DType::kF32, bx);
  ValueId m1 = b.input(input_names[2], DType::kF32, bx);
  ValueId scale = b.input(input_names[3], DType::kF32, Shape{});
  b.output(b.add(b.mul(image, scale), m0), "boxes.xy");
  b.output(b.mul(m1, scale), "boxes.wh");
  b.output(b.add(image, m1), "logits");
  auto g = std::move(b).build();
  EXPECT_TRUE(g) << g.error().to_string();
  for (size_t i = 0; i < 3; ++i) set_output_type(*g, i, bx);
  return std::move(*g);
}

inline Sample nested_sample(int64_t batch, float scale = 0.5f) {
  return SampleMap{
      {"image", iota({batch, 4})},
      {"meta", SampleMap{{"scale", static_cast<double>(scale)},
                         {"masks", SampleList{iota({batch, 4}, 100), iota({batch, 4}, 200)}}}}};
}

/// tokens f32[batch,seq,4], mask f32[batch,seq] (or unknown dims when
/// `symbolic` is false); outputs y = tokens + tokens, m = mask * mask.
inline Graph seq_model(bool symbolic = true) {
  GraphBuilder b("seq");
  const Dim batch = symbolic ? Dim::symbol("batch") : Dim::unknown();
  const Dim seq = symbolic ? Dim::symbol("seq") : Dim::unknown();
  ValueId tokens = b.input("tokens", DType::kF32, Shape{batch, seq, 4});
  ValueId mask = b.input("mask", DType::kF32, Shape{batch, seq});
  b.output(b.add(tokens, tokens), "y");
  b.output(b.mul(mask, mask), "m");
  auto g = std::move(b).build();
  EXPECT_TRUE(g) << g.error().to_string();
  set_output_type(*g, 0, Shape{batch, seq, 4});
  set_output_type(*g, 1, Shape{batch, seq});
  return std::move(*g);
}

inline Sample seq_sample(int64_t batch, int64_t seq) {
  return SampleMap{{"tokens", iota({batch, seq, 4})}, {"mask", iota({batch, seq}, 1)}};
}

/// (batch, seq) = (1,3), (2,7), (4,3), (2,3): batch 1..4 opt 2, seq 3..7 opt 3.
inline std::vector<Sample> seq_samples() {
  return {seq_sample(1, 3), seq_sample(2, 7), seq_sample(4, 3), seq_sample(2, 3)};
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace hone::spec_test
