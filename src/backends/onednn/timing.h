// Plan-time measurement of one oneDNN primitive, for lowerings that choose
// between two forms of a node by timing both (a fused or unfused conv, an
// RNN on blocked or plain weights):
//
//   const double ms = time_primitive(dnnl::lstm_forward(pd), {{DNNL_ARG_SRC_LAYER, md}, ...});
#pragma once

#include <utility>
#include <vector>

#include "backends/onednn/plan.h"

namespace hone::onednn {

/// The fastest of a few runs (ms) of `prim` on zeroed buffers laid out as
/// `args` say (infinity when a buffer cannot be allocated). Not thread-safe
/// against the same primitive running elsewhere; allocates and frees its own
/// buffers.
double time_primitive(const dnnl::primitive& prim, const std::vector<std::pair<int, md_t>>& args);
/// The fastest of a few runs (ms) of a reorder from `from` into `to`; 0 when they are equal.
double reorder_ms(const md_t& from, const md_t& to);

}  // namespace hone::onednn
