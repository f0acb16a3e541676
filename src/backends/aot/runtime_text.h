// Private to the aot backend: the C runtime of every generated library
// (src/backends/aot/runtime/*), embedded at build time by
// cmake/embed_text.cmake, so hone reads no file to generate code. emit_c()
// joins them: kHoneAotAbi, kCore, [kDnnlConv], [kLstm], [kGridSampleTaps], [kRoiAlignPoints],
// [kNmsSelect], the model's own part, kModel (runtime/README.md).
#pragma once

#include <string_view>

namespace hone::aot::runtime_text {

extern const std::string_view kHoneAotAbi;  // hone_aot_abi.h: the ABI, declared once
extern const std::string_view kCore;        // core.c: headers, SGEMM, hone_erf, types, errors
extern const std::string_view kDnnlConv;    // dnnl_conv.c: channels-last convs via oneDNN
extern const std::string_view kLstm;        // lstm.c: LSTM's vector helpers and cell kernel
extern const std::string_view kModel;       // model.c: the ABI's entry points
/// ops/grid_sample_taps.h: GridSample's taps, the reference's own C (after kCore, where a
/// GridSample step needs it).
extern const std::string_view kGridSampleTaps;
/// ops/roi_align_points.h: RoiAlign's points, the reference's own C (as kGridSampleTaps).
extern const std::string_view kRoiAlignPoints;
/// ops/nms_select.h: NonMaxSuppression's selection, the reference's own C (as kGridSampleTaps).
extern const std::string_view kNmsSelect;

}  // namespace hone::aot::runtime_text
