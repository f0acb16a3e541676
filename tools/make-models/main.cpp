// make-models: writes the example models the repository ships (models/*.onnx)
// from GraphBuilder graphs with seeded weights, so they can be regenerated
// byte for byte:   ./build/tools/make-models/make-models models
//
//   mlp.onnx  x f32[batch,16] -> Gemm 32 -> Relu -> Gemm 8 -> Softmax -> probs f32[batch,8]
//   cnn.onnx  image f32[batch,3,16,16] -> Conv 8 -> Relu -> MaxPool -> Conv 16 -> Relu
//             -> GlobalAveragePool -> Flatten -> Gemm 10 -> Softmax -> probs f32[batch,10]
//   resnet.onnx   image f32[batch,3,32,32] -> Conv 16 + BN + Relu -> 2 residual blocks
//             (Conv+BN+Relu, Conv+BN, Add, Relu; the second strided to 32 channels with a
//             1x1 projection) -> GlobalAveragePool -> Flatten -> Gemm 10 -> logits
//   mobilenet.onnx image f32[batch,3,32,32] -> Conv 16 s2 + Relu -> 3 depthwise-separable
//             blocks (3x3 depthwise Conv group=C + Relu, 1x1 Conv + Relu) -> GAP -> Gemm 10
//   transformer.onnx x f32[batch,seq,128] -> 2 post-LN encoder layers (4-head self-attention,
//             FFN 512 with erf GELU), LayerNorm and GELU written out in the decomposed ops a
//             PyTorch export produces (opset 17) -> y f32[batch,seq,128]
//   lstm.onnx x f32[seq,batch,64] -> LSTM 128 -> LSTM 128 -> last hidden state -> Gemm 10
//             -> logits f32[batch,10]
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

/// BatchNormalization with seeded scale/bias/mean/var (var > 0) for `c` channels.
hone::ValueId batch_norm(GraphBuilder& b, std::mt19937& rng, hone::ValueId x, int64_t c,
                         const std::string& name) {
  std::uniform_real_distribution<float> u(0.5f, 1.5f);
  Tensor scale = Tensor::zeros(DType::kF32, {c}), var = Tensor::zeros(DType::kF32, {c});
  for (float& v : scale.span<float>()) v = u(rng);
  for (float& v : var.span<float>()) v = u(rng);
  return b.op("BatchNormalization",
              {x, b.constant(name + ".scale", scale), b.constant(name + ".bias", biases(rng, c)),
               b.constant(name + ".mean", biases(rng, c)), b.constant(name + ".var", var)},
              {{"epsilon", 1e-5f}});
}

hone::ValueId conv_k(GraphBuilder& b, std::mt19937& rng, hone::ValueId x, int64_t cin, int64_t cout,
                     int64_t k, int64_t stride, int64_t group, const std::string& name) {
  GraphBuilder::ConvOptions o;
  const int64_t p = k / 2;
  o.pads = {p, p, p, p};
  o.strides = {stride, stride};
  o.group = group;
  const int64_t fan_in = cin / group * k * k;
  return b.conv(x, b.constant(name + ".weight", weights(rng, {cout, cin / group, k, k}, fan_in)),
                b.constant(name + ".bias", biases(rng, cout)), o);
}

hone::Result<hone::Graph> make_resnet() {
  std::mt19937 rng(20240603);
  GraphBuilder b("resnet");
  auto x = b.input("image", DType::kF32, {Dim::symbol("batch"), 3, 32, 32});
  auto h = b.relu(batch_norm(b, rng, conv_k(b, rng, x, 3, 16, 3, 1, 1, "stem"), 16, "stem.bn"));
  // Block 1: identity skip.
  auto a = b.relu(batch_norm(b, rng, conv_k(b, rng, h, 16, 16, 3, 1, 1, "b1.conv1"), 16, "b1.bn1"));
  a = batch_norm(b, rng, conv_k(b, rng, a, 16, 16, 3, 1, 1, "b1.conv2"), 16, "b1.bn2");
  h = b.relu(b.add(a, h));
  // Block 2: stride 2, 32 channels, 1x1 projection skip.
  a = b.relu(batch_norm(b, rng, conv_k(b, rng, h, 16, 32, 3, 2, 1, "b2.conv1"), 32, "b2.bn1"));
  a = batch_norm(b, rng, conv_k(b, rng, a, 32, 32, 3, 1, 1, "b2.conv2"), 32, "b2.bn2");
  auto skip = conv_k(b, rng, h, 16, 32, 1, 2, 1, "b2.proj");
  h = b.relu(b.add(a, skip));
  auto f = b.flatten(b.global_average_pool(h), 1);
  b.output(b.gemm(f, b.constant("fc.weight", weights(rng, {10, 32}, 32)),
                  b.constant("fc.bias", biases(rng, 10)), {.trans_b = true}),
           "logits");
  b.graph().metadata()["onnx.producer_name"] = "hone make-models";
  return std::move(b).build();
}

hone::Result<hone::Graph> make_mobilenet() {
  std::mt19937 rng(20240604);
  GraphBuilder b("mobilenet");
  auto x = b.input("image", DType::kF32, {Dim::symbol("batch"), 3, 32, 32});
  auto h = b.relu(conv_k(b, rng, x, 3, 16, 3, 2, 1, "stem"));
  int64_t c = 16;
  const int64_t outs[] = {32, 64, 64};
  const int64_t strides[] = {1, 2, 1};
  for (int i = 0; i < 3; ++i) {
    const std::string n = "dw" + std::to_string(i + 1);
    h = b.relu(conv_k(b, rng, h, c, c, 3, strides[i], c, n + ".depthwise"));
    h = b.relu(conv_k(b, rng, h, c, outs[i], 1, 1, 1, n + ".pointwise"));
    c = outs[i];
  }
  auto f = b.flatten(b.global_average_pool(h), 1);
  b.output(b.gemm(f, b.constant("fc.weight", weights(rng, {10, c}, c)),
                  b.constant("fc.bias", biases(rng, 10)), {.trans_b = true}),
           "logits");
  b.graph().metadata()["onnx.producer_name"] = "hone make-models";
  return std::move(b).build();
}

/// y = (x - mean) / sqrt(var + eps) * scale + bias over the last axis, spelled
/// out as torch.onnx writes it at opset 17.
hone::ValueId layer_norm(GraphBuilder& b, std::mt19937& rng, hone::ValueId x, int64_t d,
                         const std::string& name) {
  auto mean_last = [&](hone::ValueId v) {
    return b.op("ReduceMean", {v}, {{"axes", std::vector<int64_t>{-1}}, {"keepdims", int64_t{1}}});
  };
  std::uniform_real_distribution<float> u(0.8f, 1.2f);
  Tensor scale = Tensor::zeros(DType::kF32, {d});
  for (float& v : scale.span<float>()) v = u(rng);
  const hone::ValueId dev = b.sub(x, mean_last(x));
  const hone::ValueId var = mean_last(b.op("Pow", {dev, b.scalar_f32(name + ".two", 2.0f)}));
  const hone::ValueId std = b.op("Sqrt", {b.add(var, b.scalar_f32(name + ".eps", 1e-5f))});
  return b.add(b.mul(b.div(dev, std), b.constant(name + ".weight", scale)),
               b.constant(name + ".bias", biases(rng, d)));
}

/// x @ W + b for x [batch, seq, in].
hone::ValueId linear(GraphBuilder& b, std::mt19937& rng, hone::ValueId x, int64_t in, int64_t out,
                     const std::string& name) {
  return b.add(b.matmul(x, b.constant(name + ".weight", weights(rng, {in, out}, in))),
               b.constant(name + ".bias", biases(rng, out)));
}

hone::Result<hone::Graph> make_transformer() {
  constexpr int64_t kModel = 128, kHeads = 4, kHead = kModel / kHeads, kFfn = 512;
  std::mt19937 rng(20240605);
  GraphBuilder b("transformer");
  auto h = b.input("x", DType::kF32, {Dim::symbol("batch"), Dim::symbol("seq"), kModel});
  const auto scale = b.scalar_f32("attn.scale", std::sqrt(static_cast<float>(kHead)));
  for (int layer = 0; layer < 2; ++layer) {
    const std::string p = "layer" + std::to_string(layer);
    // [batch, seq, 128] -> [batch, seq, 4, 32] -> heads first.
    auto heads = [&](hone::ValueId v, std::vector<int64_t> perm) {
      return b.transpose(b.reshape(v, {0, 0, kHeads, kHead}), std::move(perm));
    };
    auto q = heads(linear(b, rng, h, kModel, kModel, p + ".attn.q"), {0, 2, 1, 3});
    auto kt = heads(linear(b, rng, h, kModel, kModel, p + ".attn.k"), {0, 2, 3, 1});
    auto v = heads(linear(b, rng, h, kModel, kModel, p + ".attn.v"), {0, 2, 1, 3});
    auto probs = b.softmax(b.div(b.matmul(q, kt), scale), -1);
    auto ctx = b.reshape(b.transpose(b.matmul(probs, v), {0, 2, 1, 3}), {0, 0, kModel});
    auto attn = linear(b, rng, ctx, kModel, kModel, p + ".attn.out");
    h = layer_norm(b, rng, b.add(h, attn), kModel, p + ".norm1");
    auto ffn = linear(b, rng, b.gelu(linear(b, rng, h, kModel, kFfn, p + ".ffn.fc1")), kFfn, kModel,
                      p + ".ffn.fc2");
    h = layer_norm(b, rng, b.add(h, ffn), kModel, p + ".norm2");
  }
  b.output(h, "y");
  b.graph().metadata()["onnx.producer_name"] = "hone make-models";
  return std::move(b).build();
}

/// One ONNX LSTM layer (forward, layout 0) over x [seq, batch, in]: Y [seq, 1, batch, hidden]
/// and Y_h [1, batch, hidden].
std::vector<hone::ValueId> lstm_layer(GraphBuilder& b, std::mt19937& rng, hone::ValueId x,
                                      int64_t in, int64_t hidden, const std::string& name) {
  std::uniform_real_distribution<float> u(-0.1f, 0.1f);
  Tensor bias = Tensor::zeros(DType::kF32, {1, 8 * hidden});
  for (float& v : bias.span<float>()) v = u(rng);
  return b.op_n("LSTM",
                {x, b.constant(name + ".W", weights(rng, {1, 4 * hidden, in}, in)),
                 b.constant(name + ".R", weights(rng, {1, 4 * hidden, hidden}, hidden)),
                 b.constant(name + ".B", bias)},
                2, {{"hidden_size", hidden}, {"direction", std::string("forward")}}, name);
}

hone::Result<hone::Graph> make_lstm() {
  constexpr int64_t kIn = 64, kHidden = 128;
  std::mt19937 rng(20240606);
  GraphBuilder b("lstm");
  auto x = b.input("x", DType::kF32, {Dim::symbol("seq"), Dim::symbol("batch"), kIn});
  auto l1 = lstm_layer(b, rng, x, kIn, kHidden, "lstm1");
  auto axis1 = b.constant("axis1", Tensor::from<int64_t>({1}, {1}));
  auto l2 = lstm_layer(b, rng, b.op("Squeeze", {l1[0], axis1}), kHidden, kHidden, "lstm2");
  auto axis0 = b.constant("axis0", Tensor::from<int64_t>({1}, {0}));
  auto last = b.op("Squeeze", {l2[1], axis0});  // [batch, hidden]
  b.output(b.gemm(last, b.constant("head.weight", weights(rng, {10, kHidden}, kHidden)),
                  b.constant("head.bias", biases(rng, 10)), {.trans_b = true}),
           "logits");
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
  for (const Item& item :
       {Item{"mlp.onnx", make_mlp}, Item{"cnn.onnx", make_cnn}, Item{"resnet.onnx", make_resnet},
        Item{"mobilenet.onnx", make_mobilenet}, Item{"transformer.onnx", make_transformer},
        Item{"lstm.onnx", make_lstm}}) {
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
