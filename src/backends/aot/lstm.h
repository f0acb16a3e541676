// Private to the aot backend: ONNX LSTM as one anchor step. Lowering packs
// the weights once (W and R padded per gate to a multiple of 16 hidden units
// and tiled so that one 64-float row holds the i, o, f, c gates of 16 hidden
// units, both biases summed); the generated code runs each step, input
// projection included (batches below 4: SGEMMs up front), as a
// register-blocked kernel that does the gate math in registers and writes h
// and c directly.
//
//   if (std::string why = why_not_lstm(g, n); !why.empty()) refuse(why);
//   HONE_CHECK_OK(infer_lstm(p, id));          // dims of Y, Y_h and Y_c, packed operands
//   emit_lstm(e, n, id, e.ptr(n.outputs[0]));  // in the step's function
#pragma once

#include <string>

#include "backends/aot/emitter.h"
#include "backends/aot/program.h"

namespace hone::aot {

/// What one LSTM node computes, decoded once from its attributes and p.operands.
struct LstmInfo {
  int64_t hidden = 0, hidden_pad = 0, input = 0, dirs = 1;
  bool reverse = false;       // direction "reverse" (bidirectional runs dir 1 reversed)
  bool batch_major = false;   // layout 1: X [batch, seq, in], states [batch, dirs, hidden]
  float clip = 0.0f;          // 0: none
  bool input_forget = false;  // f = 1 - i
  bool packed = false;        // weights packed at lowering; else packed by the code at run time
  // Operands (kNoValue when absent): X, then W, R, B, P packed or raw, then the initial states.
  ValueId x = kNoValue, w = kNoValue, r = kNoValue, b = kNoValue, p = kNoValue;
  ValueId h0 = kNoValue, c0 = kNoValue;
  DimExpr seq, batch;
};
LstmInfo lstm_info(const Program& p, NodeId id);

/// "" when aot generates code for this LSTM node, else why not (checked
/// before partitioning, so an unclaimed LSTM falls back instead of failing).
std::string why_not_lstm(const Graph& g, const Node& n);

/// Sets the dims of every output of LSTM node `id` and p.operands[id] (packing the weights).
[[nodiscard]] Result<void> infer_lstm(Program& p, NodeId id);

/// The step's workspace: projections, h and c state, runtime-packed weights.
DimExpr lstm_scratch_floats(const Program& p, NodeId id);

/// Whether the program has an LSTM step: the library then carries
/// runtime/lstm.c (vector exp, the cell kernel).
bool uses_lstm(const Program& p);

/// Writes the step body; `y` is Y's C pointer ("NULL" when Y is unused).
void emit_lstm(Emitter& e, const Node& n, NodeId id, const std::string& y, const Step& st);

}  // namespace hone::aot
