// Graph passes shared by backends. Each takes a graph and returns a new one
// that computes the same outputs from the same inputs (names kept), so a pass
// can be tested by running both on the reference backend. Every rewrite
// produces standard ONNX ops the reference interpreter runs; `optimize()`
// (hone/optimize.h) runs them all to a fixed point.
//
//   PassStats st;
//   HONE_TRY(Graph g2, hone::fold_constants(g, &st));   // st.folded nodes became initializers
//   HONE_TRY(Graph g3, hone::fold_batch_norm(g2, &st)); // st.rewritten patterns replaced
//
// The forms the passes leave for backends to recognise:
//  - Conv/Gemm/MatMul followed by Relu/Sigmoid/Tanh/... and bias Adds stays a
//    chain of standard ops whose intermediates have one reader each; a bias
//    Add into a Conv becomes the Conv's B input and MatMul+Add on 2-D operands
//    becomes Gemm with C, so a backend sees bias in the op itself.
//  - GELU (erf and tanh spellings) becomes one `Gelu` node (ONNX opset 20's op,
//    `approximate` = "none" or "tanh"), kept in the default domain whatever the
//    model's opset: the optimized graph is internal to a backend.
//  - LayerNorm written out (ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul/Add)
//    becomes LayerNormalization (opset 17).
//  - Element-wise chains and attention blocks are found, not rewritten:
//    find_elementwise_chains() and find_attention() list them for backends.
#pragma once

#include <cstddef>
#include <vector>

#include "hone/graph.h"

namespace hone {

struct PassStats {
  int folded = 0;     // nodes replaced by the constants they compute
  int removed = 0;    // nodes dropped because nothing needs their outputs
  int rewritten = 0;  // patterns replaced by fewer or simpler nodes
};

/// Evaluates, with the reference interpreter, every node whose inputs are all
/// constants (initializers, or outputs of nodes folded before it) and turns
/// its outputs into initializers. Nodes with subgraphs, random ops and nodes
/// whose outputs would exceed `max_bytes` are left alone. The folded nodes
/// are then removed.
[[nodiscard]] Result<Graph> fold_constants(const Graph& g, PassStats* stats = nullptr,
                                           size_t max_bytes = size_t{16} << 20);

/// Drops nodes none of whose outputs reach a graph output, and initializers
/// nothing reads. Graph inputs are kept even when unused: they are the interface.
[[nodiscard]] Result<Graph> eliminate_dead_code(const Graph& g, PassStats* stats = nullptr);

/// Shape, Size, and Gather/Slice of a Shape, become constants when the dims
/// they read are static (symbolic dims stay symbolic, so a Shape of
/// [batch,3] is kept while a Gather of its dim 1 becomes 3). Constant
/// folding then folds what is built from them (Unsqueeze, Concat, ...).
/// Counted in `folded`.
[[nodiscard]] Result<Graph> fold_shapes(const Graph& g, PassStats* stats = nullptr);

/// A Reshape whose target is computed from dims (Shape, Gather, Unsqueeze,
/// Concat, Cast of them) gets a constant target: entries equal to the input's
/// dim at their position become 0 (copy), static ones stay, one other becomes
/// -1. Left alone: allowzero = 1, two or more entries no rule covers.
[[nodiscard]] Result<Graph> fold_reshape_targets(const Graph& g, PassStats* stats = nullptr);
/// A Slice whose starts or ends are computed from dims gets constant bounds
/// where each is a number or its axis' dim less a number (`[:seq]` of an
/// axis of (seq+3) ends at -3). Steps of 1 or more only. Counted in `folded`.
[[nodiscard]] Result<Graph> fold_slice_bounds(const Graph& g, PassStats* stats = nullptr);

/// Inference BatchNormalization into the Conv before it (weights scaled per
/// output channel, bias shifted) or into a Gemm with constant B over its
/// output columns, when BN's parameters and the weights are constants and the
/// Conv/Gemm output has no other reader.
[[nodiscard]] Result<Graph> fold_batch_norm(const Graph& g, PassStats* stats = nullptr);

/// Bias into dense ops: Conv (no bias) + Add of a per-channel constant becomes
/// Conv with B; MatMul of 2-D operands + Add of a constant row (or scalar)
/// becomes Gemm with C; Gemm without C + Add of such a constant takes it as C.
[[nodiscard]] Result<Graph> fuse_bias(const Graph& g, PassStats* stats = nullptr);

/// A constant-mode Pad writing zeros on the spatial axes only, read by a
/// Conv alone (explicit pads or VALID), folds into that Conv's pads; read by
/// an AveragePool alone (no ceil_mode, its own pads none or counted), into
/// the pool's pads with count_include_pad=1.
[[nodiscard]] Result<Graph> fuse_pad(const Graph& g, PassStats* stats = nullptr);

/// Transpose pairs that cancel go (a pair that does not cancel becomes one
/// Transpose); a 2-D Transpose feeding a MatMul of 2-D operands becomes Gemm's
/// transA/transB; Identity nodes whose output is not a graph output go.
/// Transposes of constants are left to fold_constants.
[[nodiscard]] Result<Graph> eliminate_transposes(const Graph& g, PassStats* stats = nullptr);

/// The LayerNorm a PyTorch export writes out over the last axis,
///   m = ReduceMean(x); d = x - m; v = ReduceMean(d^2); y = d / Sqrt(v + eps) [* scale] [+ bias]
/// (d^2 as Pow(d, 2) or Mul(d, d)), becomes LayerNormalization(axis=-1).
[[nodiscard]] Result<Graph> fuse_layer_norm(const Graph& g, PassStats* stats = nullptr);

/// GELU spelled out becomes one Gelu node: the erf form
///   x * 0.5 * (1 + Erf(x / sqrt 2))   (x * 0.7071 for the division; factors in any order)
/// and the tanh form
///   x * 0.5 * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))   (x^3 as Pow or Mul).
[[nodiscard]] Result<Graph> fuse_gelu(const Graph& g, PassStats* stats = nullptr);

/// An Einsum of two operands that is a batched matrix product (each label in
/// both operands and the output, in one operand and the output, or in both
/// operands only) becomes Transpose/Reshape around one MatMul; ellipses,
/// diagonals and sums over one operand's labels stay (the reason logged).
[[nodiscard]] Result<Graph> lower_einsum(const Graph& g, PassStats* stats = nullptr);
/// An EmbeddingBag over 2-D ids as PyTorch's TorchScript exporter writes it
/// (a Loop slicing, gathering and reducing one bag per iteration, its offsets
/// computed from the ids' shape) becomes Gather and the reduction over axis 1.
[[nodiscard]] Result<Graph> lower_embedding_bag(const Graph& g, PassStats* stats = nullptr);
/// If with a constant condition becomes its branch's nodes; a Loop with a
/// constant trip count that only appends one piece a time to a sequence read
/// by SequenceAt at constant positions (torch.tensor_split's export) becomes
/// the body unrolled for each piece read. Nothing else changes.
[[nodiscard]] Result<Graph> lower_control_flow(const Graph& g, PassStats* stats = nullptr);
/// DepthToSpace (DCR or CRD) and SpaceToDepth whose input's channels and
/// spatial dims are numbers become Reshape, Transpose, Reshape (the batch may
/// be symbolic), which every backend runs.
[[nodiscard]] Result<Graph> lower_depth_to_space(const Graph& g, PassStats* stats = nullptr);
/// Tile by constant repeats becomes Expand (each repeated axis of size 1) or
/// Reshape, Expand, Reshape (a repeated axis of a larger known size split
/// into [1, d] and broadcast to [r, d]), which every backend runs.
[[nodiscard]] Result<Graph> lower_tile(const Graph& g, PassStats* stats = nullptr);

/// A maximal run of element-wise nodes (unary math, activations, binary ops
/// whose other operand is a constant or broadcasts into the chain) where each
/// node's output is read only by the next: one loop for a backend to compile.
struct ElementwiseChain {
  std::vector<NodeId> nodes;  // in order; at least two
};
std::vector<ElementwiseChain> find_elementwise_chains(const Graph& g);

/// Scaled dot-product attention: MatMul(Q, K^T) -> Mul or Div by a constant
/// scale (optional) -> [Add mask] -> Softmax(last axis) -> MatMul(., V), each
/// intermediate read once.
struct AttentionMatch {
  NodeId qk = -1;     // MatMul(Q, K^T)
  NodeId scale = -1;  // Mul/Div by the scale, -1 when absent
  NodeId mask = -1;   // Add of a mask, -1 when absent
  NodeId softmax = -1;
  NodeId av = -1;            // MatMul(probabilities, V)
  double scale_value = 1.0;  // what QK^T is multiplied by
};
std::vector<AttentionMatch> find_attention(const Graph& g);

}  // namespace hone
