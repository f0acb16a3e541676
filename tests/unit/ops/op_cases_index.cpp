// The op-case table's index and mask rows: CumSum, GatherElements,
// ScatterElements, ScatterND, OneHot, NonZero, NonMaxSuppression, and the integer forms of
// Transpose, Split, Slice, Clip and the comparisons that text, graph and mixture-of-experts models
// export (positions from a mask, relative-position gathers, scatter_add_ and index_add_, one_hot
// routing). Indices are graph inputs, read when the model runs; negative ones count from the end.
#include "ops/op_cases.h"

namespace hone::op_cases {

std::vector<OpCase> index_cases() {
  using Ints = std::vector<int64_t>;
  std::vector<OpCase> t;
  // CumSum: f32 along the last axis; i64 exclusive and reversed along a
  // negative axis (a mask's positions counted from the end).
  t.push_back({"CumSum_f32_axis1", "CumSum", 14, {in({2, 5, 3}), values({1})}});
  t.back().inputs[1].shape = {};
  t.push_back({"CumSum_i64_exclusive_reverse",
               "CumSum",
               14,
               {given(DType::kI64, {2, 4}, {1, 0, 1, 1, 5, -2, 7, 0}), values({-1})},
               {{"exclusive", int64_t{1}}, {"reverse", int64_t{1}}}});
  t.back().inputs[1].shape = {};
  t.push_back({"CumSum_exclusive_axis0",
               "CumSum",
               14,
               {edge({4, 3}), values({0})},
               {{"exclusive", int64_t{1}}}});
  t.back().inputs[1].shape = {};

  // GatherElements: indices smaller than the data off the axis, negative ones.
  t.push_back({"GatherElements_axis1_negative",
               "GatherElements",
               13,
               {in({3, 4}), given(DType::kI64, {2, 3}, {0, -1, 3, 2, -4, 1})},
               {{"axis", int64_t{1}}}});
  t.push_back({"GatherElements_i64_axis_neg2",
               "GatherElements",
               13,
               {given(DType::kI64, {3, 2}, {10, -20, 30, -40, 50, -60}),
                given(DType::kI32, {2, 2}, {2, 0, -1, 1})},
               {{"axis", int64_t{-2}}}});

  // ScatterElements: duplicate targets (the last wins without a reduction,
  // else each is reduced in turn), negative indices, i64 data.
  const std::vector<double> dup = {0, 2, 0, -3, 1, 1};  // rows 0 and 1 hit twice
  for (const char* red : {"none", "add", "mul", "max", "min"}) {
    t.push_back({std::string("ScatterElements_dup_") + red,
                 "ScatterElements",
                 18,
                 {in({4, 3}), given(DType::kI64, {2, 3}, dup), in({2, 3})},
                 {{"axis", int64_t{0}}, {"reduction", std::string(red)}}});
  }
  t.push_back(
      {"ScatterElements_i64_add_axis1",
       "ScatterElements",
       16,
       {given(DType::kI64, {2, 3}, {1, 2, 3, 4, 5, 6}), given(DType::kI64, {2, 2}, {2, 2, 0, -1}),
        given(DType::kI64, {2, 2}, {10, 100, -7, 8})},
       {{"axis", int64_t{-1}}, {"reduction", std::string("add")}}});

  // ScatterND: partial indices (k = 1 of rank 2: whole rows) with duplicate
  // and negative targets under each reduction at the opset that brought it
  // (distinct ones without: ONNX leaves the order of duplicates open); full
  // index tuples (k = rank) in indices of rank 3 into i64 data; slices of a
  // rank-3 tensor by pairs.
  for (const char* red : {"none", "add", "mul", "max", "min"}) {
    const std::string r = red;
    const std::vector<double> rows =
        r == "none" ? std::vector<double>{2, -1, 0} : std::vector<double>{0, -1, 0};
    t.push_back({"ScatterND_rows_" + r,
                 "ScatterND",
                 r == "none"                ? 13
                 : r == "max" || r == "min" ? 18
                                            : 16,
                 {edge({4, 3}), given(DType::kI64, {3, 1}, rows), in({3, 3})},
                 {{"reduction", r}}});
  }
  t.push_back({"ScatterND_elements_i64_add",
               "ScatterND",
               16,
               {given(DType::kI64, {2, 3}, {1, 2, 3, 4, 5, 6}),
                given(DType::kI64, {2, 2, 2}, {0, 1, 1, -1, 0, -2, 1, 2}),
                given(DType::kI64, {2, 2}, {10, -100, 7, 1000})},
               {{"reduction", std::string("add")}}});
  t.push_back({"ScatterND_pairs_of_rank3",
               "ScatterND",
               13,
               {in({2, 3, 4}), given(DType::kI32, {2, 2}, {1, 2, 0, -3}), in({2, 4})}});

  // OneHot: i64 values on the last axis, with a negative and an out-of-range
  // index (its row stays off_value); f32 values on axis 0.
  t.push_back({"OneHot_i64_last_axis",
               "OneHot",
               11,
               {given(DType::kI64, {2, 3}, {0, 3, -1, 7, 2, -4}), values({4}), values({0, 1})},
               {{"axis", int64_t{-1}}}});
  t.back().inputs[1].shape = {};
  t.push_back({"OneHot_f32_axis0",
               "OneHot",
               11,
               {given(DType::kI64, {3}, {1, 0, 2}), values({3}), values({-0.5, 2.0}, DType::kF32)},
               {{"axis", int64_t{0}}}});
  t.back().inputs[1].shape = {};

  // NonZero: the coordinates of the non-zero elements in row-major order,
  // [rank, count] (ops/nonzero.h): f32 edge values (0 and -0 are zero), bool
  // of rank 3, i64 some, i32 none ([1, 0]), an f32 scalar ([0, 1]).
  t.push_back({"NonZero_f32_edge", "NonZero", 13, {edge({3, 5})}});
  t.push_back(
      {"NonZero_bool_rank3", "NonZero", 13, {OpInput{DType::kBool, {2, 3, 2}, Fill::kBool}}});
  t.push_back(
      {"NonZero_i64_some", "NonZero", 13, {given(DType::kI64, {2, 3}, {0, 5, 0, -1, 0, 7})}});
  t.push_back({"NonZero_i32_none", "NonZero", 13, {given(DType::kI32, {4}, {0, 0, 0, 0})}});
  t.push_back({"NonZero_f32_scalar", "NonZero", 13, {given(DType::kF32, {}, {2.5})}});

  // Integer forms of data movement, clamping and comparison.
  t.push_back({"Transpose_i64",
               "Transpose",
               13,
               {given(DType::kI64, {2, 3}, {0, 1, 2, 3, 4, 5})},
               {{"perm", Ints{1, 0}}}});
  t.push_back({"Split_i64_axis1",
               "Split",
               13,
               {given(DType::kI64, {3, 2}, {5, 0, 5, 1, 7, 0}), values({1, 1})},
               {{"axis", int64_t{1}}},
               2});
  t.push_back({"Slice_i64_columns",
               "Slice",
               13,
               {given(DType::kI64, {3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}), values({1}),
                values({-1}), values({1})}});
  t.push_back({"Slice_bool_reversed_steps",
               "Slice",
               13,
               {OpInput{DType::kBool, {2, 5}, Fill::kBool}, values({-1}), values({-6}), values({1}),
                values({-2})}});
  t.push_back({"Clip_i64",
               "Clip",
               13,
               {given(DType::kI64, {6}, {-9, -3, 0, 2, 3, 100}), values({-3}), values({2})}});
  t.back().inputs[1].shape = t.back().inputs[2].shape = {};
  t.push_back(
      {"Equal_i64_bcast",
       "Equal",
       13,
       {given(DType::kI64, {2, 3}, {0, 1, 2, 2, 1, 0}), given(DType::kI64, {3}, {0, 1, 0})}});
  t.push_back({"Less_i64",
               "Less",
               13,
               {given(DType::kI64, {4}, {-1, 0, 1, 2}), given(DType::kI64, {4}, {0, 0, 0, 3})}});
  // GridSample: RAFT's correlation lookup (bilinear, align_corners, zeros
  // outside), the default half-pixel form, and nearest / bicubic with border
  // and reflection padding of points far outside (the edge fill's +-30).
  auto grid_sample = [](std::string name, OpInput grid, std::string mode, std::string pad,
                        int64_t align) {
    return OpCase{
        std::move(name),
        "GridSample",
        16,
        {in({2, 3, 5, 6}), std::move(grid)},
        {{"mode", std::move(mode)}, {"padding_mode", std::move(pad)}, {"align_corners", align}}};
  };
  t.push_back(
      grid_sample("GridSample_bilinear_align_corners", in({2, 4, 7, 2}), "bilinear", "zeros", 1));
  t.push_back(
      grid_sample("GridSample_bilinear_half_pixel", in({2, 3, 3, 2}), "bilinear", "zeros", 0));
  t.push_back(grid_sample("GridSample_nearest_border", edge({2, 4, 4, 2}), "nearest", "border", 0));
  t.push_back(
      grid_sample("GridSample_bicubic_reflection", edge({2, 4, 4, 2}), "bicubic", "reflection", 1));
  // RoiAlign: torchvision's R-CNN form (output_half_pixel, sampling_ratio 2,
  // a 1/8 scale) and ONNX's max mode at half_pixel with adaptive sampling;
  // boxes partly outside the map, batch indices of both images.
  const OpInput rois =
      given(DType::kF32, {4, 4}, {0, 0, 40, 40, 8, 4, 60, 30, -10, 20, 30, 70, 50, 50, 51, 52});
  const OpInput batch = given(DType::kI64, {4}, {0, 1, 1, 0});
  t.push_back({"RoiAlign_output_half_pixel",
               "RoiAlign",
               16,
               {in({2, 3, 8, 8}), rois, batch},
               {{"coordinate_transformation_mode", std::string("output_half_pixel")},
                {"output_height", int64_t{3}},
                {"output_width", int64_t{2}},
                {"sampling_ratio", int64_t{2}},
                {"spatial_scale", 0.125f}}});
  t.push_back({"RoiAlign_max_half_pixel",
               "RoiAlign",
               16,
               {in({2, 3, 8, 8}), rois, batch},
               {{"mode", std::string("max")},
                {"output_height", int64_t{2}},
                {"output_width", int64_t{2}},
                {"spatial_scale", 0.125f}}});
  // NonMaxSuppression (ops/nms_select.h): [count, 3] of (batch, class, box),
  // count known once it has run. ONNX's six boxes (a tie of scores kept in box
  // order), the same as centres and sizes, random corners in either order over
  // two batches and three classes, a score threshold, more candidates than
  // the linear scan takes (the kept-box grid), a max count of 0 and no boxes.
  const OpInput six =
      given(DType::kF32, {1, 6, 4}, {0, 0,  1, 1,  0, 0.1,  1, 1.1,  0, -0.1, 1, 0.9,
                                     0, 10, 1, 11, 0, 10.1, 1, 11.1, 0, 100,  1, 101});
  const OpInput six_scores = given(DType::kF32, {1, 1, 6}, {0.9, 0.75, 0.6, 0.95, 0.5, 0.95});
  auto nms = [](std::string name, OpInput boxes, OpInput scores, std::vector<OpInput> rest,
                int64_t center = 0) {
    OpCase c{std::move(name), "NonMaxSuppression", 11, {std::move(boxes), std::move(scores)}};
    for (OpInput& i : rest) c.inputs.push_back(std::move(i));
    if (center) c.attrs["center_point_box"] = center;
    return c;
  };
  const auto f32 = [](double v) { return values({v}, DType::kF32); };
  t.push_back(nms("NonMaxSuppression_onnx_boxes", six, six_scores, {values({3}), f32(0.5)}));
  t.push_back(
      nms("NonMaxSuppression_center_point_box",
          given(DType::kF32, {1, 6, 4}, {0.5, 0.5,  1, 1, 0.5, 0.6,  1, 1, 0.5, 0.4,   1, 1,
                                         0.5, 10.5, 1, 1, 0.5, 10.6, 1, 1, 0.5, 100.5, 1, 1}),
          six_scores, {values({3}), f32(0.5)}, 1));
  t.push_back(nms("NonMaxSuppression_batches_classes", in({2, 30, 4}), in({2, 3, 30}),
                  {values({4}), f32(0.3)}));
  t.push_back(nms("NonMaxSuppression_score_threshold", in({2, 30, 4}), in({2, 3, 30}),
                  {values({30}), f32(0.6), f32(0.25)}));
  t.push_back(nms("NonMaxSuppression_many_boxes", in({1, 200, 4}), in({1, 2, 200}),
                  {values({1000}), f32(0.2)}));
  t.push_back(nms("NonMaxSuppression_max_count_0", six, six_scores, {values({0}), f32(0.5)}));
  t.push_back(nms("NonMaxSuppression_no_boxes", in({1, 0, 4}), in({1, 2, 0}),
                  {values({5}), f32(0.5), f32(0.0)}));
  return t;
}

}  // namespace hone::op_cases
