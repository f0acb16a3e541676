// Reference kernels for the ONNX recurrent ops: RNN, GRU and LSTM.
//
// All three share one driver: inputs are validated and read as doubles, each
// direction and batch row runs its own time loop (rows are independent, so
// they run in parallel), and the results are rounded once to X's dtype.
// Gate layouts follow the spec: RNN [i], GRU [z r h], LSTM [i o f c] with
// peepholes [i o f].
#include "eval/ops.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <vector>

#include "eval/kernel_util.h"
#include "hone/shape.h"
#include "ops/attrs.h"

namespace hone::eval {
namespace {

enum class CellKind { kRnn, kGru, kLstm };

const char* cell_name(CellKind k) {
  switch (k) {
    case CellKind::kRnn:
      return "RNN";
    case CellKind::kGru:
      return "GRU";
    case CellKind::kLstm:
      return "LSTM";
  }
  return "?";
}

int64_t gate_count(CellKind k) {
  switch (k) {
    case CellKind::kRnn:
      return 1;
    case CellKind::kGru:
      return 3;
    case CellKind::kLstm:
      return 4;
  }
  return 1;
}

// --- activations ----------------------------------------------------------------

enum class ActFn {
  kRelu,
  kTanh,
  kSigmoid,
  kAffine,
  kLeakyRelu,
  kThresholdedRelu,
  kScaledTanh,
  kHardSigmoid,
  kElu,
  kSoftsign,
  kSoftplus,
};

struct Activation {
  ActFn fn = ActFn::kTanh;
  double alpha = 0.0;
  double beta = 0.0;
};

double apply(const Activation& a, double x) {
  switch (a.fn) {
    case ActFn::kRelu:
      return x > 0.0 ? x : 0.0;
    case ActFn::kTanh:
      return std::tanh(x);
    case ActFn::kSigmoid:
      return 1.0 / (1.0 + std::exp(-x));
    case ActFn::kAffine:
      return a.alpha * x + a.beta;
    case ActFn::kLeakyRelu:
      return x >= 0.0 ? x : a.alpha * x;
    case ActFn::kThresholdedRelu:
      return x >= a.alpha ? x : 0.0;  // as the RNN spec writes it
    case ActFn::kScaledTanh:
      return a.alpha * std::tanh(a.beta * x);
    case ActFn::kHardSigmoid:
      return std::clamp(a.alpha * x + a.beta, 0.0, 1.0);
    case ActFn::kElu:
      return x >= 0.0 ? x : a.alpha * (std::exp(x) - 1.0);
    case ActFn::kSoftsign:
      return x / (1.0 + std::fabs(x));
    case ActFn::kSoftplus:
      return x > 30.0 ? x : std::log1p(std::exp(x));
  }
  return x;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Parses one activation name. Alphas and betas are consumed in order, only by
// the activations that take them; an exhausted list leaves the op's default.
Result<Activation> parse_activation(const std::string& name, const std::vector<float>& alphas,
                                    size_t& next_alpha, const std::vector<float>& betas,
                                    size_t& next_beta) {
  struct Entry {
    const char* name;
    ActFn fn;
    int params;  // 0, 1 (alpha) or 2 (alpha, beta)
    double alpha, beta;
  };
  static const Entry kTable[] = {
      {"relu", ActFn::kRelu, 0, 0, 0},
      {"tanh", ActFn::kTanh, 0, 0, 0},
      {"sigmoid", ActFn::kSigmoid, 0, 0, 0},
      {"affine", ActFn::kAffine, 2, 1.0, 0.0},
      {"leakyrelu", ActFn::kLeakyRelu, 1, 0.01, 0},
      {"thresholdedrelu", ActFn::kThresholdedRelu, 1, 1.0, 0},
      {"scaledtanh", ActFn::kScaledTanh, 2, 1.0, 1.0},
      {"hardsigmoid", ActFn::kHardSigmoid, 2, 0.2, 0.5},
      {"elu", ActFn::kElu, 1, 1.0, 0},
      {"softsign", ActFn::kSoftsign, 0, 0, 0},
      {"softplus", ActFn::kSoftplus, 0, 0, 0},
  };
  const std::string key = lower(name);
  for (const Entry& e : kTable) {
    if (key != e.name) continue;
    Activation a{e.fn, e.alpha, e.beta};
    if (e.params >= 1 && next_alpha < alphas.size()) a.alpha = alphas[next_alpha++];
    if (e.params >= 2 && next_beta < betas.size()) a.beta = betas[next_beta++];
    return a;
  }
  return fail(ErrorCode::kUnsupported,
              "unsupported recurrent activation '" + name +
                  "' (expected Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, "
                  "ScaledTanh, HardSigmoid, Elu, Softsign or Softplus)");
}

// --- problem description ---------------------------------------------------------

struct Problem {
  CellKind kind;
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 1, gates = 1;
  int64_t layout = 0;
  bool reverse_only = false;
  bool has_clip = false;
  double clip = 0.0;
  bool input_forget = false;
  bool linear_before_reset = false;
  HostVector<double> x, w, r, b, h0, c0, p;  // b, h0, c0, p empty when absent
  std::vector<int64_t> lens;                 // per batch row
  std::vector<Activation> acts;              // acts_per_dir * dirs
  int64_t acts_per_dir = 1;

  double x_at(int64_t t, int64_t n, int64_t i) const {
    return layout == 0 ? x[(t * batch + n) * input + i] : x[(n * seq + t) * input + i];
  }
  // Index of (direction, batch row) in initial_h / initial_c / Y_h / Y_c.
  int64_t state_row(int64_t d, int64_t n) const {
    return layout == 0 ? d * batch + n : n * dirs + d;
  }
  // Index of the first element of Y at (t, d, n).
  int64_t y_row(int64_t t, int64_t d, int64_t n) const {
    return layout == 0 ? ((t * dirs + d) * batch + n) * hidden
                       : ((n * seq + t) * dirs + d) * hidden;
  }
  double act(int64_t d, int64_t which, double v) const {
    if (has_clip) v = std::clamp(v, -clip, clip);
    return apply(acts[static_cast<size_t>(d * acts_per_dir + which)], v);
  }
};

Result<void> check_shape(const Tensor& t, const std::vector<int64_t>& want, const char* what) {
  if (t.shape() != want)
    return fail(ErrorCode::kInvalidArgument, std::string(what) + " must have shape " +
                                                 shape_to_string(want) + ", got " +
                                                 shape_to_string(t.shape()));
  return {};
}

Result<Problem> read_problem(KernelContext& ctx, CellKind kind) {
  const Node& node = ctx.node();
  const char* op = cell_name(kind);
  Problem p;
  p.kind = kind;
  p.gates = gate_count(kind);
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  HONE_TRY(const Tensor* w, ctx.tensor(1));
  HONE_TRY(const Tensor* r, ctx.tensor(2));
  if (!is_floating(x->dtype()))
    return fail(ErrorCode::kInvalidArgument,
                std::string(op) + " input X must be a float tensor, got " + x->describe());
  for (const Tensor* t : {w, r})
    if (t->dtype() != x->dtype())
      return fail(ErrorCode::kInvalidArgument, std::string(op) + " W and R must have X's dtype " +
                                                   std::string(dtype_name(x->dtype())) + ", got " +
                                                   t->describe());
  if (x->rank() != 3 || w->rank() != 3 || r->rank() != 3)
    return fail(ErrorCode::kInvalidArgument,
                std::string(op) + " X, W and R must be rank 3, got X " + x->describe() + ", W " +
                    w->describe() + ", R " + r->describe());
  HONE_TRY(const ops::RnnAttrs ra, ops::rnn_attrs(node));
  p.layout = ra.layout;
  p.seq = p.layout == 0 ? x->dim(0) : x->dim(1);
  p.batch = p.layout == 0 ? x->dim(1) : x->dim(0);
  p.input = x->dim(2);

  p.dirs = ra.directions();
  p.reverse_only = ra.direction == ops::RnnDirection::kReverse;
  const std::string direction = ra.direction == ops::RnnDirection::kForward   ? "forward"
                                : ra.direction == ops::RnnDirection::kReverse ? "reverse"
                                                                              : "bidirectional";
  p.hidden = ra.hidden_size.value_or(r->dim(2));
  if (p.hidden <= 0)
    return fail(ErrorCode::kInvalidArgument,
                std::string(op) + " hidden_size must be positive, got " + std::to_string(p.hidden));
  const int64_t gh = p.gates * p.hidden;
  HONE_CHECK_OK(check_shape(*w, {p.dirs, gh, p.input}, "W"));
  HONE_CHECK_OK(check_shape(*r, {p.dirs, gh, p.hidden}, "R"));
  p.x = to_doubles(*x);
  p.w = to_doubles(*w);
  p.r = to_doubles(*r);

  const std::vector<int64_t> state_shape = p.layout == 0
                                               ? std::vector<int64_t>{p.dirs, p.batch, p.hidden}
                                               : std::vector<int64_t>{p.batch, p.dirs, p.hidden};
  auto read_opt = [&](size_t i, const std::vector<int64_t>& shape, const char* what,
                      HostVector<double>& out) -> Result<void> {
    if (!ctx.has_input(i)) return {};
    HONE_TRY(const Tensor* t, ctx.tensor(i));
    if (t->dtype() != x->dtype())
      return fail(ErrorCode::kInvalidArgument,
                  std::string(op) + " " + what + " must have X's dtype " +
                      std::string(dtype_name(x->dtype())) + ", got " + t->describe());
    HONE_CHECK_OK(check_shape(*t, shape, what));
    out = to_doubles(*t);
    return {};
  };
  HONE_CHECK_OK(read_opt(3, {p.dirs, 2 * gh}, "B", p.b));
  HONE_CHECK_OK(read_opt(5, state_shape, "initial_h", p.h0));
  if (kind == CellKind::kLstm) {
    HONE_CHECK_OK(read_opt(6, state_shape, "initial_c", p.c0));
    HONE_CHECK_OK(read_opt(7, {p.dirs, 3 * p.hidden}, "P", p.p));
  }

  p.lens.assign(static_cast<size_t>(p.batch), p.seq);
  if (ctx.has_input(4)) {
    HONE_TRY(const Tensor* sl, ctx.tensor(4));
    if (!is_integer(sl->dtype()))
      return fail(
          ErrorCode::kInvalidArgument,
          std::string(op) + " sequence_lens must be an integer tensor, got " + sl->describe());
    HONE_CHECK_OK(check_shape(*sl, {p.batch}, "sequence_lens"));
    p.lens = to_int64s(*sl);
    for (size_t n = 0; n < p.lens.size(); ++n)
      if (p.lens[n] < 0 || p.lens[n] > p.seq)
        return fail(ErrorCode::kInvalidArgument,
                    std::string(op) + " sequence_lens[" + std::to_string(n) +
                        "] = " + std::to_string(p.lens[n]) + " is outside [0, " +
                        std::to_string(p.seq) + "]");
  }

  if (ra.clip) {
    p.has_clip = true;
    p.clip = *ra.clip;
  }
  p.input_forget = ra.input_forget;
  p.linear_before_reset = ra.linear_before_reset;

  std::vector<std::string> defaults;
  switch (kind) {
    case CellKind::kRnn:
      defaults = {"Tanh"};
      break;
    case CellKind::kGru:
      defaults = {"Sigmoid", "Tanh"};
      break;
    case CellKind::kLstm:
      defaults = {"Sigmoid", "Tanh", "Tanh"};
      break;
  }
  p.acts_per_dir = static_cast<int64_t>(defaults.size());
  std::vector<std::string> names = ra.activations;
  if (names.empty()) {
    for (int64_t d = 0; d < p.dirs; ++d)
      names.insert(names.end(), defaults.begin(), defaults.end());
  } else if (p.dirs == 2 && static_cast<int64_t>(names.size()) == p.acts_per_dir) {
    // One direction's list given for a bidirectional op: use it for both.
    const std::vector<std::string> once = names;
    names.insert(names.end(), once.begin(), once.end());
  }
  if (static_cast<int64_t>(names.size()) != p.acts_per_dir * p.dirs)
    return fail(ErrorCode::kInvalidArgument, std::string(op) + " expects " +
                                                 std::to_string(p.acts_per_dir * p.dirs) +
                                                 " activations for direction '" + direction +
                                                 "', got " + std::to_string(names.size()));
  const std::vector<float>& alphas = ra.activation_alpha;
  const std::vector<float>& betas = ra.activation_beta;
  size_t na = 0, nb = 0;
  for (const std::string& name : names) {
    HONE_TRY(Activation a, parse_activation(name, alphas, na, betas, nb));
    p.acts.push_back(a);
  }
  return p;
}

// --- the time loop -------------------------------------------------------------------

struct Outputs {
  HostVector<double> y, y_h, y_c;
};

// Dot product of row `row` of a [rows, n] matrix block with `v`.
inline double dot(const double* m, int64_t row, int64_t n, const double* v) {
  const double* a = m + row * n;
  double s = 0.0;
  for (int64_t k = 0; k < n; ++k) s += a[k] * v[k];
  return s;
}

// Runs direction d for batch row n, writing Y rows and the final states.
void run_row(const Problem& p, int64_t d, int64_t n, Outputs& out) {
  const int64_t H = p.hidden, I = p.input, G = p.gates;
  const int64_t gh = G * H;
  const double* W = p.w.data() + d * gh * I;
  const double* R = p.r.data() + d * gh * H;
  const double* Wb = p.b.empty() ? nullptr : p.b.data() + d * 2 * gh;
  const double* Rb = p.b.empty() ? nullptr : Wb + gh;
  const double* P = p.p.empty() ? nullptr : p.p.data() + d * 3 * H;
  const int64_t srow = p.state_row(d, n) * H;

  HostVector<double> h(static_cast<size_t>(H), 0.0), c(static_cast<size_t>(H), 0.0);
  if (!p.h0.empty()) std::copy(p.h0.begin() + srow, p.h0.begin() + srow + H, h.begin());
  if (!p.c0.empty()) std::copy(p.c0.begin() + srow, p.c0.begin() + srow + H, c.begin());
  HostVector<double> xt(static_cast<size_t>(I)), xg(static_cast<size_t>(gh)),
      hg(static_cast<size_t>(gh)), next(static_cast<size_t>(H)), rh(static_cast<size_t>(H)),
      zr(static_cast<size_t>(2 * H));  // GRU z and r gates

  const bool reverse = p.reverse_only || d == 1;
  const int64_t len = p.lens[static_cast<size_t>(n)];
  for (int64_t step = 0; step < len; ++step) {
    const int64_t t = reverse ? len - 1 - step : step;
    for (int64_t i = 0; i < I; ++i) xt[i] = p.x_at(t, n, i);
    // x·W^T + Wb for every gate, h·R^T + Rb for every gate.
    for (int64_t g = 0; g < gh; ++g) {
      xg[g] = dot(W, g, I, xt.data()) + (Wb ? Wb[g] : 0.0);
      hg[g] = dot(R, g, H, h.data()) + (Rb ? Rb[g] : 0.0);
    }
    switch (p.kind) {
      case CellKind::kRnn:
        for (int64_t j = 0; j < H; ++j) next[j] = p.act(d, 0, xg[j] + hg[j]);
        break;
      case CellKind::kGru: {
        // Gates z (0), r (1), h (2).
        const double* z_x = &xg[0];
        const double* r_x = &xg[H];
        const double* h_x = &xg[2 * H];
        for (int64_t j = 0; j < H; ++j) {
          zr[j] = p.act(d, 0, z_x[j] + hg[j]);
          zr[H + j] = p.act(d, 0, r_x[j] + hg[H + j]);
        }
        if (!p.linear_before_reset) {
          for (int64_t j = 0; j < H; ++j) rh[j] = zr[H + j] * h[j];
        }
        for (int64_t j = 0; j < H; ++j) {
          double pre;
          if (p.linear_before_reset) {
            pre = h_x[j] + zr[H + j] * hg[2 * H + j];
          } else {
            pre = h_x[j] + dot(R, 2 * H + j, H, rh.data()) + (Rb ? Rb[2 * H + j] : 0.0);
          }
          const double ht = p.act(d, 1, pre);
          next[j] = (1.0 - zr[j]) * ht + zr[j] * h[j];
        }
        break;
      }
      case CellKind::kLstm: {
        // Gates i (0), o (1), f (2), c (3); peepholes i (0), o (1), f (2).
        for (int64_t j = 0; j < H; ++j) {
          const double pi = P ? P[j] : 0.0, po = P ? P[H + j] : 0.0, pf = P ? P[2 * H + j] : 0.0;
          const double it = p.act(d, 0, xg[j] + hg[j] + pi * c[j]);
          const double ft =
              p.input_forget ? 1.0 - it : p.act(d, 0, xg[2 * H + j] + hg[2 * H + j] + pf * c[j]);
          const double ct = p.act(d, 1, xg[3 * H + j] + hg[3 * H + j]);
          const double cn = ft * c[j] + it * ct;
          const double ot = p.act(d, 0, xg[H + j] + hg[H + j] + po * cn);
          c[j] = cn;
          next[j] = ot * p.act(d, 2, cn);
        }
        break;
      }
    }
    h = next;
    if (!out.y.empty()) std::copy(h.begin(), h.end(), out.y.begin() + p.y_row(t, d, n));
  }
  std::copy(h.begin(), h.end(), out.y_h.begin() + srow);
  if (p.kind == CellKind::kLstm) std::copy(c.begin(), c.end(), out.y_c.begin() + srow);
}

Result<void> recurrent(KernelContext& ctx, CellKind kind) {
  const size_t min_inputs = 3;
  if (ctx.num_inputs() < min_inputs)
    return fail(ErrorCode::kInvalidArgument, std::string(cell_name(kind)) +
                                                 " takes at least 3 inputs (X, W, R), got " +
                                                 std::to_string(ctx.num_inputs()));
  HONE_TRY(Problem p, read_problem(ctx, kind));
  const DType dt = ctx.input(0).dtype();
  Outputs out;
  const bool want_y = ctx.wants_output(0);
  if (want_y) out.y.assign(static_cast<size_t>(p.seq * p.dirs * p.batch * p.hidden), 0.0);
  out.y_h.assign(static_cast<size_t>(p.dirs * p.batch * p.hidden), 0.0);
  if (kind == CellKind::kLstm) out.y_c.assign(out.y_h.size(), 0.0);

  // Each (direction, row) writes disjoint parts of the outputs.
  const int64_t jobs = p.dirs * p.batch;
  ctx.pool().parallel_for(jobs, [&](int64_t begin, int64_t end) {
    for (int64_t job = begin; job < end; ++job) run_row(p, job / p.batch, job % p.batch, out);
  });

  const std::vector<int64_t> state_shape = p.layout == 0
                                               ? std::vector<int64_t>{p.dirs, p.batch, p.hidden}
                                               : std::vector<int64_t>{p.batch, p.dirs, p.hidden};
  if (want_y) {
    const std::vector<int64_t> y_shape =
        p.layout == 0 ? std::vector<int64_t>{p.seq, p.dirs, p.batch, p.hidden}
                      : std::vector<int64_t>{p.batch, p.seq, p.dirs, p.hidden};
    ctx.set_output(0, from_doubles(dt, y_shape, out.y));
  }
  if (ctx.wants_output(1)) ctx.set_output(1, from_doubles(dt, state_shape, out.y_h));
  if (kind == CellKind::kLstm && ctx.wants_output(2))
    ctx.set_output(2, from_doubles(dt, state_shape, out.y_c));
  return {};
}

}  // namespace

void register_rnn_ops(OpRegistry& r) {
  r.add("RNN", [](KernelContext& ctx) { return recurrent(ctx, CellKind::kRnn); });
  r.add("GRU", [](KernelContext& ctx) { return recurrent(ctx, CellKind::kGru); });
  r.add("LSTM", [](KernelContext& ctx) { return recurrent(ctx, CellKind::kLstm); });
}

}  // namespace hone::eval
