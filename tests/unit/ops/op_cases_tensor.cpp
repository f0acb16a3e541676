// The op-case table's data-movement rows: Transpose, Concat, Split, Slice,
// Gather, Pad, Resize and the reshaping ops.
#include "ops/op_cases.h"

namespace hone::op_cases {
namespace {

using Ints = std::vector<int64_t>;

}  // namespace

std::vector<OpCase> tensor_cases() {
  std::vector<OpCase> t;
  // Transpose: reversed (no perm), a given permutation, a 4-D NCHW -> NHWC.
  t.push_back({"Transpose_default", "Transpose", 13, {in({2, 3, 4})}});
  t.push_back({"Transpose_perm", "Transpose", 13, {in({2, 3, 4})}, {{"perm", Ints{1, 0, 2}}}});
  t.push_back(
      {"Transpose_nchw_nhwc", "Transpose", 13, {in({2, 3, 4, 5})}, {{"perm", Ints{0, 2, 3, 1}}}});

  // Concat: on the channel axis, a negative axis, with a constant part.
  t.push_back({"Concat_axis1",
               "Concat",
               13,
               {in({2, 3, 4}), in({2, 5, 4}), in({2, 1, 4})},
               {{"axis", int64_t{1}}}});
  t.push_back(
      {"Concat_axis_last", "Concat", 13, {in({2, 3}), weight({2, 4})}, {{"axis", int64_t{-1}}}});
  t.push_back({"Concat_axis0", "Concat", 13, {in({1, 6}), in({3, 6})}, {{"axis", int64_t{0}}}});

  // Split: equal parts, sizes as an input (13), num_outputs uneven (18).
  t.push_back({"Split_equal", "Split", 13, {in({2, 6, 3})}, {{"axis", int64_t{1}}}, 3});
  t.push_back({"Split_sizes_input",
               "Split",
               13,
               {in({2, 7, 3}), values({2, 4, 1})},
               {{"axis", int64_t{1}}},
               3});
  t.push_back({"Split_num_outputs_uneven",
               "Split",
               18,
               {in({2, 3, 7})},
               {{"axis", int64_t{-1}}, {"num_outputs", int64_t{3}}},
               3});

  // Slice: one axis, negative starts and ends, steps (negative too), clamping.
  t.push_back({"Slice_axis1", "Slice", 13, {in({3, 8, 4}), values({1}), values({6}), values({1})}});
  t.push_back({"Slice_negative_bounds",
               "Slice",
               13,
               {in({3, 8, 4}), values({-3, 0}), values({-1, 100}), values({1, 2})}});
  t.push_back({"Slice_steps",
               "Slice",
               13,
               {in({3, 8, 4}), values({0, 1}), values({3, 8}), values({0, 1}), values({2, 3})}});
  t.push_back({"Slice_negative_step",
               "Slice",
               13,
               {in({3, 8, 4}), values({-1}), values({-100}), values({1}), values({-2})}});

  // Gather: rows by index (negative ones too), along an inner axis, a scalar index.
  t.push_back({"Gather_axis0", "Gather", 13, {in({5, 4}), values({0, 4, -1, 2})}});
  t.push_back({"Gather_axis1_2d_indices",
               "Gather",
               13,
               {in({3, 6, 2}), values({5, 0, 1, -2})},
               {{"axis", int64_t{1}}}});
  t.back().inputs[1].shape = {2, 2};
  t.push_back(
      {"Gather_scalar_index", "Gather", 13, {in({4, 5}), values({2})}, {{"axis", int64_t{1}}}});
  t.back().inputs[1].shape = {};
  // The select of q, k or v out of a packed projection (`qkv[1]`), and a
  // negative axis with repeated and unordered indices.
  t.push_back({"Gather_select_packed", "Gather", 13, {in({3, 2, 4, 5}), values({1})}});
  t.back().inputs[1].shape = {};
  t.push_back({"Gather_negative_axis_runs",
               "Gather",
               13,
               {in({2, 3, 6}), values({4, 5, 0, 1, 2, 2, -6})},
               {{"axis", int64_t{-1}}}});
  t.push_back({"Gather_runtime_indices",
               "Gather",
               13,
               {weight({10, 4}), given(DType::kI64, {2, 3}, {1, 9, 0, 3, 3, -1})}});
  // i32 indices read at run time along an inner axis of data computed at run time.
  t.push_back({"Gather_runtime_i32_axis1",
               "Gather",
               13,
               {in({3, 5, 2}), given(DType::kI32, {2, 2}, {4, 0, -1, 2})},
               {{"axis", int64_t{1}}}});

  // Pad: constant (with a value), reflect, edge; pads as an input.
  t.push_back({"Pad_constant_value",
               "Pad",
               13,
               {in({2, 3, 4}), values({0, 1, 2, 0, 2, 1}), values({0.5}, DType::kF32)}});
  t.back().inputs[2].shape = {};
  // Opset 18's axes, a crop (negative pad) beside a pad on each axis, no value.
  t.push_back({"Pad_crop_axes",
               "Pad",
               18,
               {in({2, 5, 4}), values({-1, 2, 1, -1}), absent(), values({1, -1})}});
  // A crop alone: one row in front, the last dropped (RWKV's token shift,
  // nn.ZeroPad2d((0, 0, 1, -1)) over [b, seq, c]).
  t.push_back({"Pad_shift_crop", "Pad", 13, {in({2, 5, 3}), values({0, 1, 0, 0, -1, 0})}});
  t.push_back({"Pad_reflect",
               "Pad",
               13,
               {in({1, 2, 5, 5}), values({0, 0, 2, 1, 0, 0, 1, 2})},
               {{"mode", std::string("reflect")}}});
  t.push_back({"Pad_edge",
               "Pad",
               13,
               {in({1, 2, 4, 4}), values({0, 0, 1, 2, 0, 0, 3, 1})},
               {{"mode", std::string("edge")}}});

  // Resize (opset 13): nearest by scales, linear by sizes (half_pixel,
  // align_corners), cubic by scales.
  const OpInput no_roi = absent();
  t.push_back({"Resize_nearest_scales",
               "Resize",
               13,
               {in({1, 2, 4, 5}), no_roi, values({1, 1, 2, 3}, DType::kF32)}});
  t.push_back({"Resize_nearest_floor_asymmetric",
               "Resize",
               13,
               {in({1, 2, 4, 5}), no_roi, values({1, 1, 1.5, 0.6}, DType::kF32)},
               {{"nearest_mode", std::string("floor")},
                {"coordinate_transformation_mode", std::string("asymmetric")}}});
  t.push_back({"Resize_linear_sizes",
               "Resize",
               13,
               {in({1, 3, 5, 4}), no_roi, no_roi, values({1, 3, 8, 7})},
               {{"mode", std::string("linear")}}});
  t.push_back({"Resize_linear_align_corners",
               "Resize",
               13,
               {in({2, 2, 4, 4}), no_roi, values({1, 1, 2, 2}, DType::kF32)},
               {{"mode", std::string("linear")},
                {"coordinate_transformation_mode", std::string("align_corners")}}});
  t.push_back({"Resize_cubic_scales",
               "Resize",
               13,
               {in({1, 1, 5, 6}), no_roi, values({1, 1, 2, 2}, DType::kF32)},
               {{"mode", std::string("cubic")}}});
  // As PyTorch exports them: bilinear (align_corners=False) is linear with
  // pytorch_half_pixel, upsampling and down; nearest is asymmetric + floor.
  using Str = std::string;
  t.push_back(
      {"Resize_linear_pytorch_half_pixel",
       "Resize",
       13,
       {in({2, 3, 4, 5}), no_roi, values({1, 1, 2.5, 2}, DType::kF32)},
       {{"mode", Str("linear")}, {"coordinate_transformation_mode", Str("pytorch_half_pixel")}}});
  t.push_back(
      {"Resize_linear_pytorch_half_pixel_down_to_1",
       "Resize",
       13,
       {in({1, 2, 6, 7}), no_roi, no_roi, values({1, 2, 1, 3})},
       {{"mode", Str("linear")}, {"coordinate_transformation_mode", Str("pytorch_half_pixel")}}});
  t.push_back(
      {"Resize_nearest_asymmetric_floor_sizes",
       "Resize",
       13,
       {in({1, 3, 5, 4}), no_roi, no_roi, values({1, 3, 11, 9})},
       {{"nearest_mode", Str("floor")}, {"coordinate_transformation_mode", Str("asymmetric")}}});
  t.push_back({"Resize_nearest_round_prefer_ceil_half_pixel",
               "Resize",
               13,
               {in({1, 2, 4, 6}), no_roi, values({1, 1, 1.5, 0.5}, DType::kF32)},
               {{"nearest_mode", Str("round_prefer_ceil")}}});
  t.push_back(
      {"Resize_nearest_ceil_align_corners",
       "Resize",
       13,
       {in({1, 2, 4, 5}), no_roi, values({1, 1, 2, 1.6}, DType::kF32)},
       {{"nearest_mode", Str("ceil")}, {"coordinate_transformation_mode", Str("align_corners")}}});
  t.push_back({"Resize_nearest_tf_half_pixel_for_nn",
               "Resize",
               13,
               {in({1, 1, 5, 5}), no_roi, values({1, 1, 1.4, 0.6}, DType::kF32)},
               {{"coordinate_transformation_mode", Str("tf_half_pixel_for_nn")}}});
  t.push_back({"Resize_linear_half_pixel_down",
               "Resize",
               13,
               {in({2, 2, 9, 8}), no_roi, values({1, 1, 0.5, 0.375}, DType::kF32)},
               {{"mode", Str("linear")}}});
  t.push_back(
      {"Resize_linear_half_pixel_symmetric",
       "Resize",
       19,
       {in({1, 2, 4, 5}), no_roi, values({1, 1, 1.7, 2.3}, DType::kF32)},
       {{"mode", Str("linear")}, {"coordinate_transformation_mode", Str("half_pixel_symmetric")}}});
  t.push_back(
      {"Resize_cubic_exclude_outside",
       "Resize",
       13,
       {in({1, 2, 5, 6}), no_roi, values({1, 1, 1.5, 2}, DType::kF32)},
       {{"mode", Str("cubic")}, {"exclude_outside", int64_t{1}}, {"cubic_coeff_a", -0.5f}}});
  // A 1-D signal [N, C, L] resized along L; the opset-10 form (scales input 1).
  t.push_back(
      {"Resize_linear_1d_align_corners",
       "Resize",
       13,
       {in({2, 3, 7}), no_roi, values({1, 1, 3}, DType::kF32)},
       {{"mode", Str("linear")}, {"coordinate_transformation_mode", Str("align_corners")}}});
  t.push_back({"Resize_opset10_nearest",
               "Resize",
               10,
               {in({1, 2, 3, 4}), values({1, 1, 2, 0.5}, DType::kF32)}});

  // The reshaping ops.
  t.push_back({"Reshape_infer_dim", "Reshape", 14, {in({2, 3, 4}), values({4, -1})}});
  t.push_back({"Reshape_copy_dim", "Reshape", 14, {in({2, 3, 4}), values({0, 12})}});
  t.push_back({"Flatten_axis2", "Flatten", 13, {in({2, 3, 4, 5})}, {{"axis", int64_t{2}}}});
  t.push_back({"Squeeze_axes_input", "Squeeze", 13, {in({2, 1, 4, 1}), values({1, -1})}});
  t.push_back({"Unsqueeze_axes_input", "Unsqueeze", 13, {in({2, 4}), values({0, 3})}});
  // An i64 attention mask made [batch, 1, 1, seq] before its Cast.
  t.push_back({"Unsqueeze_i64_mask",
               "Unsqueeze",
               13,
               {given(DType::kI64, {2, 3}, {1, 1, 0, 1, 0, 0}), values({1, 2})}});
  t.push_back({"Expand_bcast", "Expand", 13, {in({3, 1}), values({2, 3, 4})}});
  // Expand's shape broadcasts both ways (its 1s keep the input's dims); a no-op.
  t.push_back({"Expand_shape_ones", "Expand", 13, {in({2, 1, 5}), values({3, 1, 1, 1})}});
  t.push_back({"Expand_same", "Expand", 13, {in({2, 3}), values({2, 3})}});
  t.push_back({"Tile", "Tile", 13, {in({2, 3}), values({2, 1})}});
  t.push_back({"Tile_rank3", "Tile", 13, {in({2, 1, 3}), values({3, 4, 2})}});
  // PatchTST's end padding: the last step repeated (an Expand after lower_tile).
  t.push_back({"Tile_last_step_repeated", "Tile", 13, {in({2, 7, 1}), values({1, 1, 8})}});

  // TopK: largest along the last axis, smallest along the first, ties to the lower index.
  t.push_back({"TopK_largest", "TopK", 11, {in({3, 10}), values({4})}, {{"axis", int64_t{-1}}}, 2});
  t.push_back({"TopK_smallest_axis0",
               "TopK",
               11,
               {in({6, 5}), values({3})},
               {{"axis", int64_t{0}}, {"largest", int64_t{0}}},
               2});
  t.push_back({"TopK_ties",
               "TopK",
               11,
               {given(DType::kF32, {2, 6}, {1, 3, 3, 0, 3, -1, 5, 5, 2, 5, 0, 0}), values({3})},
               {{"axis", int64_t{1}}},
               2});
  // TopK of a K given when it runs (ops/run_length.h): some, and none.
  t.push_back({"TopK_k_input",
               "TopK",
               11,
               {in({3, 6}), given(DType::kI64, {1}, {4})},
               {{"axis", int64_t{1}}},
               2});
  t.push_back({"TopK_k_input_zero",
               "TopK",
               11,
               {in({4, 3}), given(DType::kI64, {1}, {0})},
               {{"axis", int64_t{0}}, {"largest", int64_t{0}}},
               2});
  // Slice from a start given when it runs, backwards by 2 (its length found then).
  t.push_back(
      {"Slice_start_input_backwards",
       "Slice",
       13,
       {in({2, 7}), given(DType::kI64, {1}, {-2}), values({-100}), values({1}), values({-2})}});
  // Slices of starts, ends or steps given when they run (a Loop body's
  // x[i:i+1] of its count): i32 bounds of one axis, a constant's window, two
  // axes with every position given (one reversed), and an empty window.
  t.push_back({"Slice_bounds_input_i32",
               "Slice",
               13,
               {in({4, 6}), given(DType::kI32, {1}, {1}), given(DType::kI32, {1}, {-1}),
                values({1}, DType::kI32)}});
  t.push_back({"Slice_constant_data_bounds_input",
               "Slice",
               11,
               {weight({5}), given(DType::kI64, {1}, {3}), given(DType::kI64, {1}, {4})}});
  t.push_back({"Slice_two_axes_all_input",
               "Slice",
               13,
               {in({3, 5, 4}), given(DType::kI64, {2}, {4, 0}), given(DType::kI64, {2}, {-100, 2}),
                values({1, 0}), given(DType::kI64, {2}, {-2, 1})}});
  t.push_back({"Slice_i64_data_empty_window_input",
               "Slice",
               13,
               {given(DType::kI64, {2, 3}, {1, 2, 3, 4, 5, 6}), given(DType::kI64, {1}, {2}),
                given(DType::kI64, {1}, {1}), values({1})}});
  // DepthToSpace in both channel orders, and its inverse.
  t.push_back(
      {"DepthToSpace_dcr", "DepthToSpace", 13, {in({2, 8, 3, 4})}, {{"blocksize", int64_t{2}}}});
  t.push_back({"DepthToSpace_crd",
               "DepthToSpace",
               13,
               {in({1, 18, 2, 3})},
               {{"blocksize", int64_t{3}}, {"mode", std::string("CRD")}}});
  t.push_back(
      {"SpaceToDepth", "SpaceToDepth", 13, {in({2, 3, 4, 6})}, {{"blocksize", int64_t{2}}}});
  // Integer index arithmetic (a row offset added to indices), broadcasting, 64-bit products.
  t.push_back(
      {"Add_i64_bcast",
       "Add",
       14,
       {given(DType::kI64, {2, 3}, {0, 5, -7, 1, 2, 3}), given(DType::kI64, {2, 1}, {0, 100})}});
  t.push_back({"Mul_i64_large",
               "Mul",
               14,
               {given(DType::kI64, {4}, {3, -2, 1 << 20, 0}),
                given(DType::kI64, {4}, {7, 7, 1 << 20, -1})}});
  t.push_back({"Sub_i32_bcast",
               "Sub",
               14,
               {given(DType::kI32, {3}, {1, -5, 9}), given(DType::kI32, {1}, {4})}});
  t.push_back({"ArgMax_i64_ties",
               "ArgMax",
               13,
               {given(DType::kI64, {2, 4}, {3, 9, 9, 1, -5, -2, -9, -2})},
               {{"axis", int64_t{1}}}});
  // GatherND as the dynamo exporter writes it: a text encoder's pooled token
  // (index tuples [batch row, argmax], one negative), a point-cloud net's kNN
  // features (batch_dims 1), whole tuples picking single elements by i32,
  // i64 data, constant indices.
  t.push_back({"GatherND_pooled_token",
               "GatherND",
               13,
               {in({2, 5, 4}), given(DType::kI64, {2, 2}, {0, 3, 1, -1})}});
  t.push_back(
      {"GatherND_knn_batch_dims",
       "GatherND",
       13,
       {in({2, 6, 3}), given(DType::kI64, {2, 6, 2, 1}, {1, 2, 0, 5, 3, 3, 4, 0, 2, 1, 5, 4,
                                                         0, 0, 5, 1, 2, 3, 1, 4, 3, 5, 4, 2})},
       {{"batch_dims", int64_t{1}}}});
  t.push_back({"GatherND_elements_i32",
               "GatherND",
               13,
               {in({3, 4}), given(DType::kI32, {4, 2}, {0, 0, 2, 3, -1, -4, 1, 2})}});
  t.push_back({"GatherND_i64_data",
               "GatherND",
               13,
               {given(DType::kI64, {3, 2}, {5, -6, 7, 1 << 30, -9, 0}),
                given(DType::kI64, {2, 1}, {2, 0})}});
  // batch_dims 2, i32 tuples of one index with negatives among them.
  t.push_back({"GatherND_batch_dims2_negative",
               "GatherND",
               13,
               {in({2, 3, 4, 2}),
                given(DType::kI32, {2, 3, 2, 1}, {-1, 0, 3, -4, 2, -2, 1, 1, -3, 0, 0, 3})},
               {{"batch_dims", int64_t{2}}}});
  OpInput nd_idx = given(DType::kI64, {3, 2}, {1, 0, 0, 2, 1, 2});
  nd_idx.constant = true;
  t.push_back({"GatherND_constant_indices", "GatherND", 13, {in({2, 3, 4}), nd_idx}});
  // Constant tuples per batch row, negatives among them (blas plans them).
  OpInput nd_rows = given(DType::kI64, {2, 2, 1}, {-1, 0, 2, -3});
  nd_rows.constant = true;
  t.push_back({"GatherND_constant_batch_dims1_negative",
               "GatherND",
               13,
               {in({2, 3, 4}), nd_rows},
               {{"batch_dims", int64_t{1}}}});
  // Gather of many constant indices (swin v2's relative-position table: more
  // than cuda's 64 copies), negative ones among them.
  std::vector<double> many;
  for (int i = 0; i < 100; ++i) many.push_back((i * 37) % 23 - 11);
  t.push_back({"Gather_many_indices", "Gather", 13, {in({23, 3}), values(many)}});
  // TopK with K the whole axis, and smallest first with NaN and ties.
  t.push_back({"TopK_k_full_axis", "TopK", 11, {edge({2, 7}), values({7})}, {}, 2});
  t.push_back({"TopK_smallest_nan_ties",
               "TopK",
               11,
               {edge_nan({3, 8}), values({5})},
               {{"largest", int64_t{0}}},
               2});
  // TopK of a long row with many ties (each value about 16 times a row), K
  // of 40 and a run-time K of 97: most values pass through aot's heap.
  std::vector<double> tied;
  for (int i = 0; i < 2 * 500; ++i) tied.push_back((i * 37) % 61 - 30);
  t.push_back({"TopK_long_row_ties",
               "TopK",
               11,
               {given(DType::kF32, {2, 500}, tied), values({40})},
               {{"axis", int64_t{1}}},
               2});
  t.push_back({"TopK_long_row_ties_k_input_smallest",
               "TopK",
               11,
               {given(DType::kF32, {2, 500}, tied), given(DType::kI64, {1}, {97})},
               {{"axis", int64_t{1}}, {"largest", int64_t{0}}},
               2});
  // Concat of i64 and i32 values made at run time (GatherND's index tuples
  // assembled from a batch range and an argmax), three parts, a constant one.
  t.push_back({"Concat_i64_index_tuples",
               "Concat",
               13,
               {given(DType::kI64, {2, 1}, {0, 1}), given(DType::kI64, {2, 1}, {7, -3})},
               {{"axis", int64_t{1}}}});
  t.push_back({"Concat_i64_three_axis0",
               "Concat",
               13,
               {given(DType::kI64, {2}, {4, 5}), values({-1}), given(DType::kI64, {3}, {1, 2, 3})},
               {{"axis", int64_t{0}}}});
  t.push_back(
      {"Concat_i32_axis_last",
       "Concat",
       13,
       {given(DType::kI32, {2, 2}, {1, 2, 3, 4}), given(DType::kI32, {2, 3}, {5, 6, 7, 8, 9, -10})},
       {{"axis", int64_t{-1}}}});
  // Zero-sized inputs whose output is not empty (a detector's feature level
  // with no box, a dynamic dim at 0): ONNX's rules for the empty set. A Concat
  // part of none, ReduceSum over an empty axis (0), Gemm with K = 0 (beta *
  // C), ScatterElements with no index (its data).
  t.push_back(
      {"Concat_empty_part", "Concat", 13, {in({0, 6}), in({3, 6})}, {{"axis", int64_t{0}}}});
  t.push_back({"ReduceSum_empty_axis",
               "ReduceSum",
               13,
               {in({0, 3}), values({0})},
               {{"keepdims", int64_t{0}}}});
  t.push_back(
      {"Gemm_k0_beta", "Gemm", 13, {in({2, 0}), in({0, 3}), weight({2, 3})}, {{"beta", 0.5f}}});
  t.push_back({"ScatterElements_no_index",
               "ScatterElements",
               16,
               {in({4, 3}), given(DType::kI64, {0, 3}, {}), in({0, 3})},
               {{"axis", int64_t{0}}}});
  return t;
}

}  // namespace hone::op_cases
