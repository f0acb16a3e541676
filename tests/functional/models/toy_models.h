// Toy models for the functional suite: deterministic, seeded, built with
// GraphBuilder, nothing downloaded.
//
//   Seeded s = seeded(7);
//   Graph g = mlp(s);                                  // same seed, same weights
//   std::vector<Tensor> x = s.inputs(g, {{"batch", 4}});
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "hone/graph.h"
#include "hone/pipeline.h"
#include "hone/tensor.h"

namespace hone::functional {

/// A seeded source of weights and inputs.
class Seeded {
 public:
  explicit Seeded(uint64_t seed) : rng_(seed) {}
  /// Uniform in [lo, hi).
  Tensor uniform(std::vector<int64_t> shape, float lo = -1.0f, float hi = 1.0f);
  /// Random inputs for every graph input: symbolic dims from `dims` (else 1);
  /// floats uniform in [-1, 1), integers in [0, int_high), bools random.
  std::vector<Tensor> inputs(const Graph& g, const std::map<std::string, int64_t>& dims = {},
                             int64_t int_high = 4);
  std::mt19937_64& rng() { return rng_; }

 private:
  std::mt19937_64 rng_;
};

inline Seeded seeded(uint64_t seed) {
  return Seeded(seed);
}

/// x[batch,16] -> Gemm 32 -> Relu -> Gemm 8 -> y[batch,8]. The weights are
/// returned too so tests can compute the answer independently.
struct MlpWeights {
  Tensor w1, b1, w2, b2;
};
Graph mlp(Seeded& s, MlpWeights* weights = nullptr);
/// Plain-loop evaluation of mlp(), independent of every backend.
Tensor mlp_oracle(const MlpWeights& w, const Tensor& x);

/// image[batch,3,16,16] -> Conv 3x3 -> Relu -> MaxPool 2 -> Conv 3x3 (groups 2)
/// -> Relu -> GlobalAveragePool -> Flatten -> Gemm 10 -> logits[batch,10].
Graph conv_net(Seeded& s);

/// One pre-norm self-attention block over x[batch,seq,32] with 4 heads:
/// LayerNorm -> Q/K/V MatMul -> split heads -> softmax(QK^T/sqrt(d)) V -> merge
/// -> output MatMul -> residual Add. Dynamic batch and sequence axes.
Graph attention_block(Seeded& s);

/// Two inputs, two outputs: (a[batch,4], b[batch,4]) -> (a*b + 1, sigmoid(a-b)).
Graph multi_io(Seeded& s);

/// Integer and bool inputs: table lookup ids[batch,3] (i64) into an embedding,
/// masked by mask[batch,3] (bool) -> out[batch,3,4] (f32), count[batch] (i64).
Graph integer_io(Seeded& s);

/// x[batch,seq,8] -> MatMul 8x8 -> Tanh -> ReduceMean over seq -> y[batch,8].
Graph dynamic_seq(Seeded& s);

/// Nested inputs and outputs, named by their paths in the trees:
///   {image[batch,6], meta: {scale: scalar, masks: [m0[batch,6], m1[batch,6]]}}
///   -> {result: {score[batch], parts: [image*scale*m0 (Gemm'd), relu(image - m1)]}}
/// Graph inputs "image", "meta.scale", "meta.masks[0]", "meta.masks[1]";
/// outputs "result.score", "result.parts[0]", "result.parts[1]".
Graph nested_io(Seeded& s);

/// A two-model pipeline: an encoder x[batch,12] -> features[batch,16]
/// (Gemm, Tanh) and a head features[batch,16] -> probs[batch,5] (Gemm,
/// Relu, Gemm, Softmax). The head reads the encoder's output by name.
Graph pipeline_encoder(Seeded& s);
Graph pipeline_head(Seeded& s);
/// That pipeline's encoder and head (one draw of weights), and inputs x of
/// batch 1 and 4 to tune a stage on.
struct EncoderHead {
  Graph encoder, head;
  std::vector<TensorMap> samples;
};
/// Draws them and adds them as the stages "encoder" and "head" of each of `pipelines`.
[[nodiscard]] Result<EncoderHead> encoder_head_pipelines(
    Seeded& s, std::initializer_list<Pipeline*> pipelines);

}  // namespace hone::functional
