#include "backends/aot/dim_expr.h"

#include <algorithm>

#include "ops/sym_int.h"

namespace hone::aot {

struct DimExpr::Node {
  char op = 's';  // 's' symbol, or '+', '-', '*', '/'
  std::string name;
  DimExpr a, b;
  std::string text;  // readable, computed once
  ops::SymInt key;   // canonical value (unknown where SymInt cannot say: a division by 0)
};

namespace {

/// A symbol as one opaque SymInt atom: a name holding the characters that
/// structure an expression ("/conv/Conv_output_0:2", a graph's derived
/// "(4*seq)" bound as a symbol of its own) has them replaced, so it never
/// reads as an expression of other symbols.
ops::SymInt atom_key(const std::string& name) {
  std::string t = name;
  for (char& c : t) switch (c) {
      case '(':
        c = '[';
        break;
      case ')':
        c = ']';
        break;
      case '+':
        c = '#';
        break;
      case '-':
        c = '~';
        break;
      case '*':
        c = '^';
        break;
      case '/':
        c = '|';
        break;
      default:
        break;
    }
  // (A name of digits alone would read back as that number.)
  if (std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; })) t = "$" + t;
  return ops::SymInt::of(Dim::symbol(t));
}

ops::SymInt key_of(const DimExpr& e) {
  return e.is_const() ? ops::SymInt(e.value()) : e.node()->key;
}

ops::SymInt combine(char op, const ops::SymInt& a, const ops::SymInt& b) {
  if (!a.is_known() || !b.is_known()) return ops::SymInt();
  switch (op) {
    case '+':
      return a + b;
    case '-':
      return a - b;
    case '*':
      return a * b;
    default:
      return b.is_number() && b.number() == 0 ? ops::SymInt() : a / b;
  }
}

DimExpr make(char op, DimExpr a, DimExpr b) {
  ops::SymInt key = combine(op, key_of(a), key_of(b));
  // An expression whose parts cancel ("(seq+1)-seq") is that number.
  if (key.is_number()) return key.number();
  auto n = std::make_shared<DimExpr::Node>();
  // Commutative operands in a fixed order, so "256*batch" == "batch*256".
  if ((op == '+' || op == '*') && a.to_string() > b.to_string()) std::swap(a, b);
  n->op = op;
  n->text = "(" + a.to_string() + op + b.to_string() + ")";
  n->key = std::move(key);
  n->a = std::move(a);
  n->b = std::move(b);
  return DimExpr::from_node(std::move(n));
}

/// `e` as coef * f1 * f2 * ... when it is a pure product (constants, symbols
/// and other non-product terms as opaque factors).
void flatten_product(const DimExpr& e, int64_t& coef, std::vector<DimExpr>& factors) {
  if (e.is_const()) {
    coef *= e.value();
    return;
  }
  if (const DimExpr::Node* n = e.node(); n->op == '*') {
    flatten_product(n->a, coef, factors);
    flatten_product(n->b, coef, factors);
    return;
  }
  factors.push_back(e);
}

}  // namespace

DimExpr::DimExpr(int64_t value) : value_(value) {}

DimExpr DimExpr::symbol(std::string name) {
  auto n = std::make_shared<Node>();
  n->op = 's';
  n->text = name;
  n->key = atom_key(name);
  n->name = std::move(name);
  return from_node(std::move(n));
}

DimExpr DimExpr::from_node(std::shared_ptr<const Node> n) {
  DimExpr d;
  d.node_ = std::move(n);
  return d;
}

bool DimExpr::operator==(const DimExpr& o) const {
  if (is_const() && o.is_const()) return value_ == o.value_;
  const ops::SymInt a = key_of(*this), b = key_of(o);
  if (a.is_known() && b.is_known()) return a == b;
  return to_string() == o.to_string();
}

int64_t DimExpr::eval(const std::map<std::string, int64_t>& bindings) const {
  if (!node_) return value_;
  if (node_->op == 's') {
    auto it = bindings.find(node_->name);
    return it == bindings.end() ? 0 : it->second;
  }
  const int64_t a = node_->a.eval(bindings), b = node_->b.eval(bindings);
  switch (node_->op) {
    case '+':
      return a + b;
    case '-':
      return a - b;
    case '*':
      return a * b;
    default:
      return b == 0 ? 0 : a / b;
  }
}

std::string DimExpr::to_c(const std::function<std::string(const std::string&)>& symbol_c) const {
  if (!node_) return std::to_string(value_);
  if (node_->op == 's') return symbol_c(node_->name);
  // A symbol may be 0 at run time (an empty tensor): no division traps on it.
  if (node_->op == '/')
    return "hone_dim_div(" + node_->a.to_c(symbol_c) + ", " + node_->b.to_c(symbol_c) + ")";
  return "(" + node_->a.to_c(symbol_c) + node_->op + node_->b.to_c(symbol_c) + ")";
}

std::string DimExpr::to_string() const {
  return node_ ? node_->text : std::to_string(value_);
}

DimExpr operator+(const DimExpr& a, const DimExpr& b) {
  if (a.is_const() && b.is_const()) return a.value() + b.value();
  if (a.is_const() && a.value() == 0) return b;
  if (b.is_const() && b.value() == 0) return a;
  return make('+', a, b);
}

DimExpr operator-(const DimExpr& a, const DimExpr& b) {
  if (a.is_const() && b.is_const()) return a.value() - b.value();
  if (b.is_const() && b.value() == 0) return a;
  if (a == b) return 0;
  return make('-', a, b);
}

DimExpr operator*(const DimExpr& a, const DimExpr& b) {
  if (a.is_const() && b.is_const()) return a.value() * b.value();
  // Products are kept as sorted factors times a trailing constant, so equal
  // products print (and compare) equal however they were associated.
  int64_t coef = 1;
  std::vector<DimExpr> f;
  flatten_product(a, coef, f);
  flatten_product(b, coef, f);
  if (coef == 0) return 0;
  std::sort(f.begin(), f.end(),
            [](const DimExpr& x, const DimExpr& y) { return x.to_string() < y.to_string(); });
  if (coef != 1) f.push_back(coef);
  DimExpr r = f[0];
  for (size_t i = 1; i < f.size(); ++i) r = make('*', r, f[i]);
  return r;
}

DimExpr operator/(const DimExpr& a, const DimExpr& b) {
  if (a.is_const() && b.is_const()) return b.value() == 0 ? 0 : a.value() / b.value();
  if (b.is_const() && b.value() == 1) return a;
  if (a == b) return 1;
  // Cancel common factors of two products: a reshape's -1 divides the
  // element count by the dims it knows.
  int64_t ca = 1, cb = 1;
  std::vector<DimExpr> fa, fb;
  flatten_product(a, ca, fa);
  flatten_product(b, cb, fb);
  bool exact = cb != 0 && ca % cb == 0;
  for (const DimExpr& f : fb) {
    auto it = std::find(fa.begin(), fa.end(), f);
    if (it == fa.end()) {
      exact = false;
      break;
    }
    fa.erase(it);
  }
  if (exact) {
    DimExpr q = ca / cb;
    for (const DimExpr& f : fa) q = q * f;
    return q;
  }
  return make('/', a, b);
}

DimExpr product(const DimExprs& dims, size_t from, size_t to) {
  DimExpr p = 1;
  for (size_t i = from; i < to && i < dims.size(); ++i) p = p * dims[i];
  return p;
}

std::string to_string(const DimExprs& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + dims[i].to_string();
  return s + "]";
}

bool all_const(const DimExprs& dims) {
  for (const DimExpr& d : dims)
    if (!d.is_const()) return false;
  return true;
}

namespace {

std::optional<DimExpr> from_tree(
    const ops::SymTree& t,
    const std::function<std::optional<DimExpr>(const std::string&)>& symbol) {
  using K = ops::SymTree::Kind;
  if (t.kind == K::kNumber) return DimExpr(t.number);
  if (t.kind == K::kSymbol) return symbol(t.symbol);
  std::vector<DimExpr> args;
  for (const ops::SymTree& a : t.args) {
    auto e = from_tree(a, symbol);
    if (!e) return std::nullopt;
    args.push_back(std::move(*e));
  }
  if (t.kind == K::kFloorDiv) return args[0] / args[1];
  DimExpr r = t.kind == K::kSum ? DimExpr(0) : DimExpr(1);
  for (const DimExpr& a : args) r = t.kind == K::kSum ? r + a : r * a;
  return r;
}

}  // namespace

std::optional<DimExpr> dim_expr_of(
    const Dim& d, const std::function<std::optional<DimExpr>(const std::string&)>& symbol) {
  if (d.is_static()) return DimExpr(d.value());
  if (!d.is_symbolic()) return std::nullopt;
  // The whole name first: a block input binds a derived dim as a symbol of its own.
  if (auto whole = symbol(d.symbol_name())) return whole;
  if (!ops::is_derived(d)) return std::nullopt;
  auto t = ops::sym_tree(d);
  if (!t) return std::nullopt;
  return from_tree(*t, symbol);
}

}  // namespace hone::aot
