// The op-case table's network rows: MatMul, Gemm, Conv, pools, the
// normalisations, Softmax and the reductions.
#include "ops/op_cases.h"

namespace hone::op_cases {
namespace {

using Attrs = std::map<std::string, Attribute>;
using Ints = std::vector<int64_t>;

OpCase conv(std::string name, Ints x, Ints w, bool bias, Attrs attrs) {
  OpCase c{std::move(name), "Conv", 11, {in(std::move(x)), weight(w)}, std::move(attrs)};
  if (bias) c.inputs.push_back(weight({w[0]}));
  return c;
}

OpCase pool(std::string name, std::string op, Ints x, Attrs attrs) {
  return {std::move(name), std::move(op), 19, {in(std::move(x))}, std::move(attrs)};
}

}  // namespace

std::vector<OpCase> nn_cases() {
  std::vector<OpCase> t;
  // MatMul: 2-D, batched with broadcasting, 1-D operands, constant weights.
  t.push_back({"MatMul_2d", "MatMul", 13, {in({3, 4}), in({4, 5})}});
  t.push_back({"MatMul_batched_bcast", "MatMul", 13, {in({2, 1, 3, 4}), in({5, 4, 6})}});
  t.push_back({"MatMul_vector_left", "MatMul", 13, {in({4}), in({3, 4, 5})}});
  t.push_back({"MatMul_vector_right", "MatMul", 13, {in({3, 2, 4}), in({4})}});
  t.push_back({"MatMul_weight", "MatMul", 13, {in({2, 7, 16}), weight({16, 9})}});
  // Einsum of two operands that is a batched matrix product (lower_einsum
  // makes it Transpose/Reshape/MatMul): maxvit's attention products, the
  // output permuted, labels merged, an outer product, a full contraction.
  auto einsum = [](std::string name, std::string eq, std::vector<OpInput> ins) {
    return OpCase{std::move(name), "Einsum", 12, std::move(ins), {{"equation", std::move(eq)}}};
  };
  t.push_back(
      einsum("Einsum_qk", "bghid,bghjd->bghij", {in({1, 2, 2, 5, 4}), in({1, 2, 2, 6, 4})}));
  t.push_back(
      einsum("Einsum_av", "bghij,bghjd->bghid", {in({1, 2, 2, 5, 6}), in({1, 2, 2, 6, 4})}));
  t.push_back(einsum("Einsum_permuted", "bhqd,hbkd->bkhq", {in({2, 3, 4, 5}), in({3, 2, 6, 5})}));
  t.push_back(
      einsum("Einsum_merged_groups", "abkl,klcd->acbd", {in({2, 3, 4, 5}), in({4, 5, 3, 2})}));
  t.push_back(einsum("Einsum_implicit", "ij,jk", {in({3, 4}), weight({4, 5})}));
  t.push_back(einsum("Einsum_outer", "i,j->ij", {in({3}), in({4})}));
  t.push_back(einsum("Einsum_dot", "ijk,ijk->", {in({2, 3, 4}), in({2, 3, 4})}));
  // Gemm: transA/transB/alpha/beta, C broadcast from a row, a column, a scalar, none.
  t.push_back({"Gemm_plain", "Gemm", 13, {in({5, 7}), weight({7, 9}), weight({9})}});
  t.push_back({"Gemm_transA_transB_alpha_beta",
               "Gemm",
               13,
               {in({7, 5}), weight({9, 7}), weight({9})},
               {{"transA", int64_t{1}}, {"transB", int64_t{1}}, {"alpha", 0.5f}, {"beta", 2.0f}}});
  t.push_back({"Gemm_transB_column_C",
               "Gemm",
               13,
               {in({6, 8}), weight({4, 8}), weight({6, 1})},
               {{"transB", int64_t{1}}}});
  t.push_back({"Gemm_scalar_C_beta0",
               "Gemm",
               13,
               {in({3, 4}), weight({4, 5}), weight({})},
               {{"beta", 0.0f}, {"alpha", 3.0f}}});
  t.push_back({"Gemm_no_C", "Gemm", 13, {in({3, 4}), weight({4, 5})}});
  t.push_back({"Gemm_runtime_B_C", "Gemm", 13, {in({6, 5}), in({5, 3}), in({6, 3})}});

  // Conv: pads, strides, dilations, groups (depthwise too), 1x1, 1-D, auto_pad.
  t.push_back(conv("Conv_3x3", {1, 3, 8, 8}, {4, 3, 3, 3}, true, {}));
  t.push_back(
      conv("Conv_3x3_pads", {2, 3, 7, 9}, {5, 3, 3, 3}, true, {{"pads", Ints{1, 1, 1, 1}}}));
  t.push_back(conv("Conv_asym_pads_strides", {1, 4, 9, 8}, {6, 4, 3, 2}, true,
                   {{"pads", Ints{1, 0, 2, 1}}, {"strides", Ints{2, 3}}}));
  t.push_back(conv("Conv_dilated_3x3", {1, 3, 11, 11}, {4, 3, 3, 3}, true,
                   {{"dilations", Ints{2, 2}}, {"pads", Ints{2, 2, 2, 2}}}));
  t.push_back(conv("Conv_groups", {1, 8, 6, 6}, {6, 4, 3, 3}, true,
                   {{"group", int64_t{2}}, {"pads", Ints{1, 1, 1, 1}}}));
  t.push_back(conv("Conv_depthwise_strided", {2, 6, 9, 9}, {6, 1, 3, 3}, true,
                   {{"group", int64_t{6}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}}));
  t.push_back(conv("Conv_1x1_no_bias", {1, 16, 5, 5}, {8, 16, 1, 1}, false, {}));
  t.push_back(conv("Conv_1d", {2, 3, 12}, {4, 3, 3}, true,
                   {{"pads", Ints{1, 2}}, {"strides", Ints{2}}, {"dilations", Ints{2}}}));
  // Video nets' 3-D convs: R(2+1)D's (1,3,3) spatial conv, strided and padded.
  t.push_back(conv("Conv_3d", {1, 3, 4, 6, 5}, {4, 3, 1, 3, 3}, true,
                   {{"pads", Ints{0, 1, 1, 0, 1, 1}}, {"strides", Ints{1, 2, 1}}}));
  t.push_back(conv("Conv_auto_pad_same_upper", {1, 2, 7, 7}, {3, 2, 4, 4}, true,
                   {{"auto_pad", std::string("SAME_UPPER")}, {"strides", Ints{2, 2}}}));
  t.push_back(conv("Conv_auto_pad_same_lower", {2, 3, 7, 8}, {2, 3, 2, 2}, false,
                   {{"auto_pad", std::string("SAME_LOWER")}, {"strides", Ints{2, 2}}}));
  t.push_back(conv("Conv_auto_pad_valid", {2, 3, 7, 8}, {2, 3, 3, 3}, true,
                   {{"auto_pad", std::string("VALID")}}));
  t.push_back({"Conv_runtime_weights",
               "Conv",
               11,
               {in({1, 3, 6, 6}), in({4, 3, 3, 3}), in({4})},
               {{"pads", Ints{1, 1, 1, 1}}}});
  t.push_back(conv("Conv_wide_channels", {1, 64, 6, 6}, {32, 64, 3, 3}, true, {}));
  t.back().atol = 1e-4;  // sums of 576 products

  // Pools: padding, strides, ceil_mode, count_include_pad, dilations, global.
  t.push_back(
      pool("MaxPool_3x3_s2_pads", "MaxPool", {2, 3, 9, 8},
           {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}}));
  t.push_back(pool("MaxPool_ceil_mode", "MaxPool", {2, 3, 9, 8},
                   {{"kernel_shape", Ints{3, 2}},
                    {"strides", Ints{2, 2}},
                    {"pads", Ints{1, 0, 1, 1}},
                    {"ceil_mode", int64_t{1}}}));
  t.push_back(pool("MaxPool_dilated", "MaxPool", {1, 2, 10, 10},
                   {{"kernel_shape", Ints{2, 2}}, {"dilations", Ints{2, 2}}}));
  t.push_back(
      pool("MaxPool_1d", "MaxPool", {2, 3, 11}, {{"kernel_shape", Ints{3}}, {"strides", Ints{2}}}));
  t.push_back(
      pool("AveragePool_exclude_pad", "AveragePool", {2, 3, 9, 8},
           {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 1}}, {"pads", Ints{1, 1, 1, 1}}}));
  t.push_back(pool("AveragePool_count_include_pad", "AveragePool", {2, 3, 9, 8},
                   {{"kernel_shape", Ints{3, 3}},
                    {"strides", Ints{2, 1}},
                    {"pads", Ints{1, 1, 1, 1}},
                    {"count_include_pad", int64_t{1}}}));
  t.push_back(
      pool("AveragePool_ceil_mode", "AveragePool", {1, 2, 7, 7},
           {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}, {"ceil_mode", int64_t{1}}}));
  t.push_back(
      pool("AveragePool_dilated", "AveragePool", {2, 3, 9, 8},
           {{"kernel_shape", Ints{2, 3}}, {"pads", Ints{1, 1, 0, 1}}, {"dilations", Ints{2, 1}}}));
  t.push_back(pool("AveragePool_auto_pad_same_upper", "AveragePool", {2, 3, 7, 6},
                   {{"kernel_shape", Ints{2, 2}},
                    {"auto_pad", std::string("SAME_UPPER")},
                    {"strides", Ints{2, 2}}}));
  // 3-D: MViT's MaxPool3d on the skip path (stride 1 in time), and averages.
  t.push_back(pool("MaxPool_3d", "MaxPool", {1, 3, 4, 7, 6},
                   {{"kernel_shape", Ints{3, 3, 3}},
                    {"strides", Ints{1, 2, 2}},
                    {"pads", Ints{1, 1, 1, 1, 1, 1}}}));
  t.push_back(pool("AveragePool_3d_ceil_mode", "AveragePool", {2, 2, 5, 5, 6},
                   {{"kernel_shape", Ints{2, 3, 2}},
                    {"strides", Ints{2, 2, 2}},
                    {"pads", Ints{0, 1, 1, 1, 0, 0}},
                    {"ceil_mode", int64_t{1}}}));
  t.push_back(pool("AveragePool_3d_count_include_pad", "AveragePool", {1, 3, 4, 5, 5},
                   {{"kernel_shape", Ints{3, 2, 3}},
                    {"strides", Ints{1, 2, 1}},
                    {"pads", Ints{1, 0, 1, 1, 1, 1}},
                    {"dilations", Ints{1, 2, 1}},
                    {"count_include_pad", int64_t{1}}}));
  t.push_back(pool("GlobalAveragePool", "GlobalAveragePool", {2, 5, 6, 7}, {}));
  t.push_back(pool("GlobalMaxPool", "GlobalMaxPool", {2, 5, 6, 7}, {}));

  // BatchNormalization (inference): given epsilon, 4-D and 2-D.
  t.push_back(
      {"BatchNormalization_4d",
       "BatchNormalization",
       15,
       {in({2, 3, 4, 5}), weight({3}), weight({3}), weight({3}), weight({3}, Fill::kPositive)},
       {{"epsilon", 1e-3f}}});
  t.push_back({"BatchNormalization_2d",
               "BatchNormalization",
               15,
               {in({4, 6}), weight({6}), weight({6}), weight({6}), weight({6}, Fill::kPositive)}});
  // LayerNormalization: last axis, from axis 1 (scale over two dims), no bias.
  t.push_back({"LayerNormalization_last",
               "LayerNormalization",
               17,
               {in({2, 5, 7}), weight({7}), weight({7})}});
  t.push_back({"LayerNormalization_axis1_no_bias",
               "LayerNormalization",
               17,
               {in({2, 5, 7}), weight({5, 7})},
               {{"axis", int64_t{1}}, {"epsilon", 1e-3f}}});
  t.push_back({"InstanceNormalization",
               "InstanceNormalization",
               6,
               {in({2, 3, 4, 5}), weight({3}), weight({3})}});
  t.push_back({"InstanceNormalization_1d_epsilon",
               "InstanceNormalization",
               6,
               {in({3, 4, 37}), weight({4}), weight({4})},
               {{"epsilon", 1e-2f}}});
  // PyTorch's GroupNorm export: [N, groups, -1] rows, scale ones and B zeros
  // (its own weight and bias follow as Mul and Add), rows longer than a vector.
  t.push_back({"InstanceNormalization_groupnorm_export",
               "InstanceNormalization",
               6,
               {in({2, 3, 300}), values({1, 1, 1}, DType::kF32), values({0, 0, 0}, DType::kF32)},
               {{"epsilon", 1e-5f}}});

  // Softmax: opset 11 flattens from `axis`, opset 13 normalises along it.
  for (int64_t opset : {11, 13})
    for (int64_t axis : {0, 1, -1}) {
      const std::string suffix = "_opset" + std::to_string(opset) +
                                 (axis < 0 ? "_axis_last" : "_axis" + std::to_string(axis));
      t.push_back({"Softmax" + suffix, "Softmax", opset, {edge({2, 5, 7})}, {{"axis", axis}}});
      t.push_back({"LogSoftmax" + suffix, "LogSoftmax", opset, {in({2, 5, 7})}, {{"axis", axis}}});
    }

  // Reductions: axes as an attribute (opset 13 for all but ReduceSum),
  // axes as an input (ReduceSum 13, every Reduce* 18), keepdims, all axes.
  for (const char* op : {"ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
                         "ReduceL2", "ReduceSumSquare", "ReduceLogSumExp"}) {
    const std::string o = op;
    t.push_back({o + "_axes_attr",
                 op,
                 13,
                 {in({2, 5, 7})},
                 {{"axes", Ints{0, 2}}, {"keepdims", int64_t{0}}}});
    t.push_back({o + "_axes_input_keepdims", op, 18, {in({2, 5, 7}), values({-1})}});
  }
  t.push_back({"ReduceMean_all_axes", "ReduceMean", 13, {in({3, 4, 5})}});
  t.push_back({"ReduceSum_axes_input",
               "ReduceSum",
               13,
               {in({2, 5, 7}), values({1})},
               {{"keepdims", int64_t{0}}}});
  t.push_back({"ReduceSum_axes_input_keepdims", "ReduceSum", 13, {in({2, 5, 7}), values({0, 2})}});
  t.push_back({"ReduceSum_all_axes", "ReduceSum", 13, {in({4, 6, 5})}});
  // Reductions of larger rows (a block or warp per row), over separated axes,
  // and log-sum-exp of large values (its max must come out first).
  t.push_back({"ReduceSumSquare_long_rows", "ReduceSumSquare", 18, {in({3, 2000}), values({1})}});
  t.push_back({"ReduceL2_inner_axis", "ReduceL2", 18, {in({4, 300, 3}), values({1})}});
  t.push_back({"ReduceMin_separated_axes", "ReduceMin", 18, {in({3, 4, 5, 6}), values({1, 3})}});
  t.push_back({"ReduceLogSumExp_large", "ReduceLogSumExp", 18, {edge({4, 9}), values({1})}});
  t.push_back({"ReduceLogSum_axes_attr",
               "ReduceLogSum",
               13,
               {pos({2, 5, 7})},
               {{"axes", Ints{1}}, {"keepdims", int64_t{0}}}});
  t.push_back({"ReduceProd_all_axes", "ReduceProd", 13, {pos({2, 3, 4})}});
  // Reductions of edge values (zeros, -0, ties, negatives, +-30): swin v2's
  // cosine attention (ReduceL2 over the last axis, keepdims, opset 18),
  // axes of one element (the result maps x: |x|, x*x, log x), empty axes
  // (every axis, or with noop_with_empty_axes the input itself).
  t.push_back({"ReduceL2_cosine_attention", "ReduceL2", 18, {edge({2, 3, 5, 8}), values({-1})}});
  t.push_back({"ReduceL1_edge_attr",
               "ReduceL1",
               13,
               {edge({3, 4, 5})},
               {{"axes", Ints{1}}, {"keepdims", int64_t{0}}}});
  t.push_back({"ReduceMax_edge_ties",
               "ReduceMax",
               18,
               {edge({4, 3, 6}), values({0, 2})},
               {{"keepdims", int64_t{0}}}});
  t.push_back({"ReduceMin_edge_ties", "ReduceMin", 18, {edge({5, 7}), values({0})}});
  t.push_back({"ReduceProd_edge", "ReduceProd", 18, {edge({4, 3, 2}), values({1, 2})}});
  t.push_back({"ReduceSumSquare_edge", "ReduceSumSquare", 18, {edge({3, 9}), values({-1})}});
  t.push_back({"ReduceMean_edge_inner", "ReduceMean", 18, {edge({2, 4, 6}), values({-2, -1})}});
  t.push_back({"ReduceLogSum_axes_input", "ReduceLogSum", 18, {pos({3, 4, 5}), values({0, 2})}});
  t.push_back({"ReduceL1_unit_axis", "ReduceL1", 18, {edge({3, 1, 4}), values({1})}});
  t.push_back({"ReduceL2_unit_axis_opset13",
               "ReduceL2",
               13,
               {edge({3, 4, 1})},
               {{"axes", Ints{2}}, {"keepdims", int64_t{0}}}});
  t.push_back({"ReduceSumSquare_unit_axis", "ReduceSumSquare", 18, {edge({1, 6}), values({0})}});
  t.push_back({"ReduceLogSumExp_unit_axis", "ReduceLogSumExp", 18, {edge({2, 1, 3}), values({1})}});
  t.push_back(
      {"ReduceLogSumExp_empty_axes_all", "ReduceLogSumExp", 18, {edge({3, 4}), values({})}});
  t.push_back({"ReduceL2_empty_axes_noop",
               "ReduceL2",
               18,
               {edge({3, 4}), values({})},
               {{"noop_with_empty_axes", int64_t{1}}}});
  t.push_back({"ReduceSum_no_axes_noop",
               "ReduceSum",
               13,
               {edge({2, 5})},
               {{"noop_with_empty_axes", int64_t{1}}}});
  t.push_back({"ReduceMean_no_axes_opset18", "ReduceMean", 18, {edge({2, 3, 4})}});
  t.push_back({"ArgMax_axis1", "ArgMax", 13, {in({3, 6, 4})}, {{"axis", int64_t{1}}}});

  // ConvTranspose as generators and U-Nets export it: kernel 4, stride 2, pad 1
  // (DCGAN), kernel 2 stride 2 with a bias (U-Net), groups with dilations and
  // output_padding, 1-D, SAME_UPPER, and an explicit output_shape.
  auto deconv = [](std::string name, Ints x, Ints w, bool bias, Attrs attrs) {
    OpCase c{std::move(name), "ConvTranspose", 11, {in(std::move(x)), weight(w)}, std::move(attrs)};
    if (bias) c.inputs.push_back(weight({w[1]}));
    return c;
  };
  t.push_back(deconv("ConvTranspose_k4_s2_p1", {2, 6, 4, 4}, {6, 3, 4, 4}, false,
                     {{"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}}));
  t.push_back(deconv("ConvTranspose_k2_s2_bias", {1, 4, 3, 5}, {4, 5, 2, 2}, true,
                     {{"strides", Ints{2, 2}}}));
  OpCase grouped =
      deconv("ConvTranspose_groups_dilated_output_padding", {1, 4, 3, 4}, {4, 3, 3, 2}, false,
             {{"group", int64_t{2}},
              {"strides", Ints{2, 3}},
              {"dilations", Ints{2, 1}},
              {"pads", Ints{1, 0, 2, 1}},
              {"output_padding", Ints{1, 2}}});
  grouped.inputs.push_back(weight({6}));
  t.push_back(grouped);
  t.push_back(deconv("ConvTranspose_1d", {2, 3, 7}, {3, 2, 3}, true, {{"strides", Ints{2}}}));
  t.push_back(deconv("ConvTranspose_auto_pad_same_upper", {1, 2, 3, 3}, {2, 2, 3, 3}, false,
                     {{"strides", Ints{2, 2}}, {"auto_pad", std::string("SAME_UPPER")}}));
  t.push_back(deconv("ConvTranspose_output_shape", {1, 2, 3, 3}, {2, 1, 3, 3}, false,
                     {{"strides", Ints{2, 2}}, {"output_shape", Ints{7, 6}}}));

  // LSTM and GRU as PyTorch exports them: X [seq, batch, input], biases,
  // initial states, every output; forward, reverse and bidirectional.
  for (const char* dir : {"forward", "reverse", "bidirectional"}) {
    const int64_t d = std::string(dir) == "bidirectional" ? 2 : 1, h = 4;
    t.push_back({std::string("LSTM_") + dir,
                 "LSTM",
                 14,
                 {in({5, 2, 3}), weight({d, 4 * h, 3}), weight({d, 4 * h, h}), weight({d, 8 * h}),
                  absent(), in({d, 2, h}), in({d, 2, h})},
                 {{"hidden_size", h}, {"direction", std::string(dir)}},
                 3});
    t.push_back(
        {std::string("GRU_") + dir,
         "GRU",
         14,
         {in({5, 2, 3}), weight({d, 3 * h, 3}), weight({d, 3 * h, h}), weight({d, 6 * h}), absent(),
          in({d, 2, h})},
         {{"hidden_size", h}, {"direction", std::string(dir)}, {"linear_before_reset", int64_t{1}}},
         2});
  }
  // GRU with the reset gate applied before R_h (linear_before_reset = 0),
  // batch-major (layout 1), no bias, no initial state.
  t.push_back({"GRU_reset_first_batch_major_no_bias",
               "GRU",
               14,
               {in({3, 4, 5}), weight({1, 18, 5}), weight({1, 18, 6})},
               {{"hidden_size", int64_t{6}}, {"layout", int64_t{1}}},
               2});
  // No bias and no initial state (zeros).
  t.push_back({"LSTM_no_bias_no_state",
               "LSTM",
               14,
               {in({4, 3, 6}), weight({1, 20, 6}), weight({1, 20, 5})},
               {{"hidden_size", int64_t{5}}},
               3});
  // Ties: the first index, or the last with select_last_index; a long axis.
  const std::vector<double> ties = {1, 3, 3, 0, -1, -1, 2, -1, 5, 5, 5, 0};
  t.push_back({"ArgMax_ties_first",
               "ArgMax",
               13,
               {given(DType::kF32, {3, 4}, ties)},
               {{"axis", int64_t{1}}}});
  t.push_back({"ArgMin_ties_last",
               "ArgMin",
               13,
               {given(DType::kF32, {3, 4}, ties)},
               {{"axis", int64_t{1}}, {"select_last_index", int64_t{1}}}});
  t.push_back({"ArgMax_ties_last_axis0",
               "ArgMax",
               13,
               {given(DType::kF32, {3, 4}, ties)},
               {{"axis", int64_t{0}}, {"select_last_index", int64_t{1}}}});
  t.push_back({"ArgMax_long_axis", "ArgMax", 13, {in({2, 1000})}, {{"axis", int64_t{-1}}}});
  t.push_back({"ArgMin_last_no_keepdims",
               "ArgMin",
               13,
               {in({3, 6, 4})},
               {{"axis", int64_t{-1}}, {"keepdims", int64_t{0}}}});
  return t;
}

}  // namespace hone::op_cases
