// make-models: writes the example models the repository ships (models/*.onnx)
// from GraphBuilder graphs with seeded weights, so they can be regenerated
// byte for byte:   ./build/tools/make-models/make-models models
//
//   mlp.onnx  x f32[batch,16] -> Gemm 32 -> Relu -> Gemm 8 -> Softmax -> probs f32[batch,8]
//   cnn.onnx  image f32[batch,3,16,16] -> Conv 8 -> Relu -> MaxPool -> Conv 16 -> Relu
//             -> GlobalAveragePool -> Flatten -> Gemm 10 -> Softmax -> probs f32[batch,10]
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "hone/graph_builder.h"
#include "hone/onnx.h"

namespace {

using hone::Dim;
using hone::DType;
using hone::GraphBuilder;
using hone::Tensor;

// He-style uniform init: U(-a, a) with a = sqrt(6 / fan_in).
Tensor weights(std::mt19937& rng, std::vector<int64_t> shape, int64_t fan_in) {
  const float a = std::sqrt(6.0f / static_cast<float>(fan_in));
  std::uniform_real_distribution<float> u(-a, a);
  Tensor t = Tensor::zeros(DType::kF32, std::move(shape));
  for (float& v : t.span<float>()) v = u(rng);
  return t;
}

Tensor biases(std::mt19937& rng, int64_t n) {
  std::uniform_real_distribution<float> u(-0.1f, 0.1f);
  Tensor t = Tensor::zeros(DType::kF32, {n});
  for (float& v : t.span<float>()) v = u(rng);
  return t;
}

hone::Result<hone::Graph> make_mlp() {
  std::mt19937 rng(20240601);
  GraphBuilder b("mlp");
  auto x = b.input("x", DType::kF32, {Dim::symbol("batch"), 16});
  auto h = b.relu(b.gemm(x, b.constant("fc1.weight", weights(rng, {32, 16}, 16)),
                         b.constant("fc1.bias", biases(rng, 32)), {.trans_b = true}));
  auto logits = b.gemm(h, b.constant("fc2.weight", weights(rng, {8, 32}, 32)),
                       b.constant("fc2.bias", biases(rng, 8)), {.trans_b = true});
  b.output(b.softmax(logits, 1), "probs");
  b.graph().metadata()["onnx.producer_name"] = "hone make-models";
  return std::move(b).build();
}

hone::Result<hone::Graph> make_cnn() {
  std::mt19937 rng(20240602);
  GraphBuilder b("cnn");
  auto x = b.input("image", DType::kF32, {Dim::symbol("batch"), 3, 16, 16});
  GraphBuilder::ConvOptions same;
  same.pads = {1, 1, 1, 1};
  auto c1 = b.relu(b.conv(x, b.constant("conv1.weight", weights(rng, {8, 3, 3, 3}, 27)),
                          b.constant("conv1.bias", biases(rng, 8)), same));
  auto p1 = b.max_pool(c1, {2, 2}, {2, 2}, {0, 0, 0, 0});
  auto c2 = b.relu(b.conv(p1, b.constant("conv2.weight", weights(rng, {16, 8, 3, 3}, 72)),
                          b.constant("conv2.bias", biases(rng, 16)), same));
  auto f = b.flatten(b.global_average_pool(c2), 1);
  auto logits = b.gemm(f, b.constant("fc.weight", weights(rng, {10, 16}, 16)),
                       b.constant("fc.bias", biases(rng, 10)), {.trans_b = true});
  b.output(b.softmax(logits, 1), "probs");
  b.graph().metadata()["onnx.producer_name"] = "hone make-models";
  return std::move(b).build();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make-models OUT_DIR\n");
    return 2;
  }
  const std::filesystem::path out = argv[1];
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  struct Item {
    const char* file;
    hone::Result<hone::Graph> (*make)();
  };
  for (const Item& item : {Item{"mlp.onnx", make_mlp}, Item{"cnn.onnx", make_cnn}}) {
    auto g = item.make();
    if (!g) {
      fmt::print(stderr, "error: {}\n", g.error().to_string());
      return 1;
    }
    const auto path = out / item.file;
    auto saved = hone::onnx::save_model(*g, path.string());
    if (!saved) {
      fmt::print(stderr, "error: {}\n", saved.error().to_string());
      return 1;
    }
    fmt::print("wrote {} ({} parameters)\n", path.string(), g->parameter_count());
  }
  return 0;
}
