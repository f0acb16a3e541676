// Private to the aot backend: what LSTM and GRU share. ONNX's recurrent ops
// read X, W, R, B, sequence_lens and initial_h alike and write Y and Y_h
// alike, by the same layout; only the gates and the cell differ (LSTM: four
// gates and a cell state, packed for a register-blocked kernel, lstm.h; GRU:
// three gates through SGEMMs, gru.cpp). Each op's checks, dims and state
// handling go through here, so the two cannot drift apart.
//
//   if (std::string why = why_not_rnn(g, n, kGruKind); !why.empty()) refuse(why);
//   HONE_TRY(RnnDims d, rnn_dims(p, n, kGruKind));   // W, R, B checked, initial_h accepted
//   const RnnStrides s = rnn_strides(d);               // in the emitter
#pragma once

#include <string>
#include <vector>

#include "backends/aot/emitter.h"
#include "backends/aot/program.h"

namespace hone::aot {

/// One recurrent op as the shared code sees it.
struct RnnKind {
  const char* op;                        // "LSTM", "GRU"
  int64_t gates;                         // 4, 3
  size_t outputs;                        // Y, Y_h (, Y_c)
  std::vector<const char*> activations;  // the defaults, the only ones aot runs
  std::vector<size_t> weight_slots;      // inputs that are weights (W, R, B, and LSTM's P)
};
extern const RnnKind kLstmKind, kGruKind;

/// "" when aot generates code for this node of `kind`, else why not.
std::string why_not_rnn(const Graph& g, const Node& n, const RnnKind& kind);

/// The dims of one recurrent node, its inputs checked against them.
struct RnnDims {
  int64_t dirs = 1, hidden = 0, input = 0;
  bool batch_major = false;  // layout 1: X [batch, seq, in], states [batch, dirs, hidden]
  DimExpr seq, batch;
  DimExprs state, y;  // Y_h's (and Y_c's) and Y's dims
};
/// The dims of recurrent node `n` (its checks passed at lowering).
RnnDims rnn_shape(const Program& p, const Node& n);
/// Checks X, W, R and B and takes initial_h (input 5) with dims that may
/// differ from the state's where one side is a symbol (checked by
/// emit_state_checks() when the code runs); sets the outputs' dims and dtype.
[[nodiscard]] Result<RnnDims> rnn_dims(Program& p, const Node& n, const RnnKind& kind);
/// The same acceptance for another state input (LSTM's initial_c).
[[nodiscard]] Result<void> accept_state(Program& p, const Node& n, size_t i, const RnnDims& d,
                                        const char* what);

/// Row strides (C expressions over S and B) of X, Y and the states, by layout.
struct RnnStrides {
  std::string xt, xb;      // X rows: step t and batch row b at t * xt + b * xb
  std::string yt, yb, yd;  // Y elements: t * yt + d * yd + b * yb
  std::string sb, sd;      // states: d * sd + b * sb
};
RnnStrides rnn_strides(const RnnDims& d);

/// Declares S and B, then fails the run where a state's dims (`states`: value,
/// name; kNoValue skipped) are not the state's.
void emit_rnn_prologue(Emitter& e, const char* op, const RnnDims& d,
                       const std::vector<std::pair<ValueId, const char*>>& states);

/// GRU (gru.cpp): "" when aot generates code for node `n`, else why not.
std::string why_not_gru(const Graph& g, const Node& n);
/// Sets the dims of GRU node `id`'s outputs and its operands.
[[nodiscard]] Result<void> infer_gru(Program& p, NodeId id);
/// The step's workspace: projections, h · R^T, h, r h.
DimExpr gru_scratch_floats(const Program& p, NodeId id);
/// Writes the step body (Y and Y_h each where the graph reads them).
void emit_gru(Emitter& e, const Node& n, NodeId id, const Step& st);

}  // namespace hone::aot
