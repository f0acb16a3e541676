#include "functional/models/toy_models.h"

#include <cmath>
#include <stdexcept>

#include "hone/graph_builder.h"

namespace hone::functional {
namespace {

Graph finish(GraphBuilder&& b) {
  auto g = std::move(b).build();
  if (!g) throw std::runtime_error("toy model does not validate: " + g.error().to_string());
  return std::move(*g);
}

Tensor i64s(std::vector<int64_t> v) {
  const auto n = static_cast<int64_t>(v.size());
  return Tensor::from<int64_t>({n}, v);
}

}  // namespace

Tensor Seeded::uniform(std::vector<int64_t> shape, float lo, float hi) {
  Tensor t = Tensor::zeros(DType::kF32, std::move(shape));
  std::uniform_real_distribution<float> d(lo, hi);
  for (float& v : t.span<float>()) v = d(rng_);
  return t;
}

std::vector<Tensor> Seeded::inputs(const Graph& g, const std::map<std::string, int64_t>& dims,
                                   int64_t int_high) {
  std::vector<Tensor> out;
  for (ValueId id : g.inputs()) {
    const Value& v = g.value(id);
    std::vector<int64_t> shape;
    if (v.shape)
      for (const Dim& d : v.shape->dims()) {
        if (d.is_static())
          shape.push_back(d.value());
        else if (d.is_symbolic() && dims.count(d.symbol_name()))
          shape.push_back(dims.at(d.symbol_name()));
        else
          shape.push_back(1);
      }
    Tensor t = Tensor::zeros(v.dtype, shape);
    if (v.dtype == DType::kF32) {
      std::uniform_real_distribution<float> d(-1.0f, 1.0f);
      for (float& x : t.span<float>()) x = d(rng_);
    } else if (v.dtype == DType::kI64) {
      std::uniform_int_distribution<int64_t> d(0, int_high - 1);
      for (int64_t& x : t.span<int64_t>()) x = d(rng_);
    } else if (v.dtype == DType::kBool) {
      std::bernoulli_distribution d(0.5);
      for (bool& x : t.span<bool>()) x = d(rng_);
    } else {
      throw std::runtime_error("Seeded::inputs: no generator for dtype " +
                               std::string(dtype_name(v.dtype)));
    }
    out.push_back(std::move(t));
  }
  return out;
}

Graph mlp(Seeded& s, MlpWeights* weights) {
  MlpWeights w{s.uniform({16, 32}, -0.5f, 0.5f), s.uniform({32}, -0.1f, 0.1f),
               s.uniform({32, 8}, -0.5f, 0.5f), s.uniform({8}, -0.1f, 0.1f)};
  GraphBuilder b("mlp");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 16});
  ValueId h = b.relu(b.gemm(x, b.constant("w1", w.w1), b.constant("b1", w.b1)));
  b.output(b.gemm(h, b.constant("w2", w.w2), b.constant("b2", w.b2)), "y");
  if (weights) *weights = w;
  return finish(std::move(b));
}

Tensor mlp_oracle(const MlpWeights& w, const Tensor& x) {
  const int64_t n = x.dim(0);
  auto dense = [](const Tensor& in, const Tensor& W, const Tensor& B, bool relu) {
    const int64_t rows = in.dim(0), k = W.dim(0), m = W.dim(1);
    Tensor out = Tensor::zeros(DType::kF32, {rows, m});
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < m; ++j) {
        double acc = B.data<float>()[j];
        for (int64_t i = 0; i < k; ++i)
          acc += static_cast<double>(in.data<float>()[r * k + i]) * W.data<float>()[i * m + j];
        out.data<float>()[r * m + j] = static_cast<float>(relu && acc < 0 ? 0.0 : acc);
      }
    return out;
  };
  (void)n;
  return dense(dense(x, w.w1, w.b1, true), w.w2, w.b2, false);
}

Graph conv_net(Seeded& s) {
  GraphBuilder b("conv_net");
  ValueId x = b.input("image", DType::kF32, Shape{Dim::symbol("batch"), 3, 16, 16});
  GraphBuilder::ConvOptions same;
  same.pads = {1, 1, 1, 1};
  ValueId c1 = b.relu(b.conv(x, b.constant("conv1.w", s.uniform({8, 3, 3, 3}, -0.4f, 0.4f)),
                             b.constant("conv1.b", s.uniform({8}, -0.1f, 0.1f)), same));
  ValueId p1 = b.max_pool(c1, {2, 2}, {2, 2}, {0, 0, 0, 0});
  GraphBuilder::ConvOptions grouped = same;
  grouped.group = 2;
  ValueId c2 = b.relu(b.conv(p1, b.constant("conv2.w", s.uniform({16, 4, 3, 3}, -0.3f, 0.3f)),
                             b.constant("conv2.b", s.uniform({16}, -0.1f, 0.1f)), grouped));
  ValueId f = b.flatten(b.global_average_pool(c2), 1);
  b.output(b.gemm(f, b.constant("fc.w", s.uniform({16, 10}, -0.5f, 0.5f)),
                  b.constant("fc.b", s.uniform({10}, -0.1f, 0.1f))),
           "logits");
  return finish(std::move(b));
}

Graph attention_block(Seeded& s) {
  constexpr int64_t kModel = 32, kHeads = 4, kHead = kModel / kHeads;
  GraphBuilder b("attention_block");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), Dim::symbol("seq"), kModel});
  ValueId ln = b.layer_norm(x, b.constant("ln.scale", s.uniform({kModel}, 0.8f, 1.2f)),
                            b.constant("ln.bias", s.uniform({kModel}, -0.1f, 0.1f)), -1);
  const float scale = 1.0f / std::sqrt(static_cast<float>(kHead));
  auto heads = [&](ValueId v) {  // [b,s,32] -> [b,4,s,8]
    return b.transpose(b.reshape(v, {0, 0, kHeads, kHead}), {0, 2, 1, 3});
  };
  ValueId q = heads(b.matmul(ln, b.constant("wq", s.uniform({kModel, kModel}, -0.3f, 0.3f))));
  ValueId k = heads(b.matmul(ln, b.constant("wk", s.uniform({kModel, kModel}, -0.3f, 0.3f))));
  ValueId v = heads(b.matmul(ln, b.constant("wv", s.uniform({kModel, kModel}, -0.3f, 0.3f))));
  ValueId scores = b.mul(b.matmul(q, b.transpose(k, {0, 1, 3, 2})), b.scalar_f32("scale", scale));
  ValueId ctx = b.matmul(b.softmax(scores, -1), v);  // [b,4,s,8]
  ValueId merged = b.reshape(b.transpose(ctx, {0, 2, 1, 3}), {0, 0, kModel});
  ValueId out = b.matmul(merged, b.constant("wo", s.uniform({kModel, kModel}, -0.3f, 0.3f)));
  b.output(b.add(x, out), "y");
  return finish(std::move(b));
}

Graph multi_io(Seeded& s) {
  (void)s;
  GraphBuilder b("multi_io");
  ValueId a = b.input("a", DType::kF32, Shape{Dim::symbol("batch"), 4});
  ValueId c = b.input("b", DType::kF32, Shape{Dim::symbol("batch"), 4});
  b.output(b.add(b.mul(a, c), b.scalar_f32("one", 1.0f)), "prod_plus_one");
  b.output(b.sigmoid(b.sub(a, c)), "sig_diff");
  return finish(std::move(b));
}

Graph integer_io(Seeded& s) {
  GraphBuilder b("integer_io");
  ValueId ids = b.input("ids", DType::kI64, Shape{Dim::symbol("batch"), 3});
  ValueId mask = b.input("mask", DType::kBool, Shape{Dim::symbol("batch"), 3});
  ValueId table = b.constant("table", s.uniform({4, 4}));
  ValueId emb = b.op("Gather", {table, ids}, {{"axis", int64_t{0}}});    // [b,3,4]
  ValueId m = b.op("Unsqueeze", {mask, b.constant("axes", i64s({2}))});  // [b,3,1]
  ValueId zero = b.scalar_f32("zero", 0.0f);
  b.output(b.op("Where", {m, emb, zero}), "out");
  ValueId count = b.op("ReduceSum",
                       {b.op("Cast", {mask}, {{"to", int64_t{7}}}),  // 7 = INT64
                        b.constant("sum_axes", i64s({1}))},
                       {{"keepdims", int64_t{0}}});
  b.output(count, "count");
  return finish(std::move(b));
}

Graph dynamic_seq(Seeded& s) {
  GraphBuilder b("dynamic_seq");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), Dim::symbol("seq"), 8});
  ValueId h = b.tanh(b.matmul(x, b.constant("w", s.uniform({8, 8}, -0.5f, 0.5f))));
  b.output(b.op("ReduceMean", {h}, {{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{0}}}),
           "y");
  return finish(std::move(b));
}

Graph nested_io(Seeded& s) {
  GraphBuilder b("nested_io");
  const Shape bx{Dim::symbol("batch"), 6};
  ValueId image = b.input("image", DType::kF32, bx);
  ValueId scale = b.input("meta.scale", DType::kF32, Shape{});
  ValueId m0 = b.input("meta.masks[0]", DType::kF32, bx);
  ValueId m1 = b.input("meta.masks[1]", DType::kF32, bx);
  ValueId w = b.constant("w", s.uniform({6, 6}));
  ValueId bias = b.constant("bias", s.uniform({6}));
  ValueId p0 = b.gemm(b.mul(b.mul(image, scale), m0), w, bias);
  ValueId p1 = b.relu(b.sub(image, m1));
  ValueId score =
      b.op("ReduceSum", {b.add(p0, p1), b.constant("axes", i64s({1}))}, {{"keepdims", int64_t{0}}});
  b.output(score, "result.score");
  b.output(p0, "result.parts[0]");
  b.output(p1, "result.parts[1]");
  return finish(std::move(b));
}

Graph pipeline_encoder(Seeded& s) {
  GraphBuilder b("encoder");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 12});
  b.output(b.tanh(b.gemm(x, b.constant("we", s.uniform({12, 16}, -0.5f, 0.5f)),
                         b.constant("be", s.uniform({16})))),
           "features");
  return finish(std::move(b));
}

Graph pipeline_head(Seeded& s) {
  GraphBuilder b("head");
  ValueId f = b.input("features", DType::kF32, Shape{Dim::symbol("batch"), 16});
  ValueId h = b.relu(b.gemm(f, b.constant("w1", s.uniform({16, 24}, -0.5f, 0.5f)),
                            b.constant("b1", s.uniform({24}))));
  b.output(b.softmax(b.gemm(h, b.constant("w2", s.uniform({24, 5}, -0.5f, 0.5f)),
                            b.constant("b2", s.uniform({5})))),
           "probs");
  return finish(std::move(b));
}

Result<EncoderHead> encoder_head_pipelines(Seeded& s, std::initializer_list<Pipeline*> pipelines) {
  EncoderHead out{pipeline_encoder(s), pipeline_head(s), {}};
  for (Pipeline* p : pipelines) {
    HONE_CHECK_OK(p->add_stage("encoder", out.encoder));
    HONE_CHECK_OK(p->add_stage("head", out.head));
  }
  for (int64_t b : {1, 4}) out.samples.push_back({{"x", s.uniform({b, 12})}});
  return out;
}

}  // namespace hone::functional
