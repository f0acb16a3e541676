#include "ops/sym_int.h"

#include <algorithm>
#include <utility>

namespace hone::ops {
namespace {

/// A product of atoms (symbols, or floor quotients by their text), sorted.
using Monomial = std::vector<std::string>;

/// A sum of coefficient * monomial; the empty monomial is the constant.
struct Poly {
  std::map<Monomial, int64_t> terms;
  void add(const Monomial& m, int64_t c) {
    if (c == 0) return;
    int64_t& t = terms[m];
    t += c;
    if (t == 0) terms.erase(m);
  }
  bool is_number() const { return terms.empty() || (terms.size() == 1 && terms.count({})); }
  int64_t number() const {
    auto it = terms.find({});
    return it == terms.end() ? 0 : it->second;
  }
};

/// Characters that structure an expression's text; a symbol holding one
/// cannot enter an expression.
bool is_operator(char c) {
  return c == '(' || c == ')' || c == '+' || c == '-' || c == '*' || c == '/';
}

std::string monomial_text(const Monomial& m) {
  std::string s;
  for (size_t i = 0; i < m.size(); ++i) s += (i ? "*" : "") + m[i];
  return s;
}

/// The canonical text: a lone atom as itself, anything else in parentheses,
/// terms in monomial order with the constant last, each "c*a*b".
std::string poly_text(const Poly& p) {
  if (p.is_number()) return std::to_string(p.number());
  if (p.terms.size() == 1 && p.terms.begin()->second == 1 && !p.terms.begin()->first.empty() &&
      p.terms.begin()->first.size() == 1)
    return p.terms.begin()->first[0];
  std::vector<std::pair<Monomial, int64_t>> ts(p.terms.begin(), p.terms.end());
  std::stable_partition(ts.begin(), ts.end(), [](const auto& t) { return !t.first.empty(); });
  std::string s = "(";
  for (size_t i = 0; i < ts.size(); ++i) {
    const auto& [m, c] = ts[i];
    std::string term;
    if (m.empty())
      term = std::to_string(c);
    else if (c == 1)
      term = monomial_text(m);
    else if (c == -1)
      term = "-" + monomial_text(m);
    else
      term = std::to_string(c) + "*" + monomial_text(m);
    if (i > 0 && term[0] != '-') s += "+";
    s += term;
  }
  return s + ")";
}

Poly atom(const std::string& name) {
  Poly p;
  p.add({name}, 1);
  return p;
}

Poly number(int64_t v) {
  Poly p;
  p.add({}, v);
  return p;
}

Poly operator*(const Poly& a, const Poly& b) {
  Poly r;
  for (const auto& [ma, ca] : a.terms)
    for (const auto& [mb, cb] : b.terms) {
      Monomial m = ma;
      m.insert(m.end(), mb.begin(), mb.end());
      std::sort(m.begin(), m.end());
      r.add(m, ca * cb);
    }
  return r;
}

Poly add(Poly a, const Poly& b, int64_t sign) {
  for (const auto& [m, c] : b.terms) a.add(m, sign * c);
  return a;
}

/// `a` / `b` when `b` is one term dividing every term of `a`.
std::optional<Poly> exact_quotient(const Poly& a, const Poly& b) {
  if (b.terms.size() != 1) return std::nullopt;
  const auto& [mb, cb] = *b.terms.begin();
  if (cb == 0) return std::nullopt;
  Poly q;
  for (const auto& [ma, ca] : a.terms) {
    if (ca % cb != 0) return std::nullopt;
    Monomial rest = ma;
    for (const std::string& f : mb) {
      auto it = std::find(rest.begin(), rest.end(), f);
      if (it == rest.end()) return std::nullopt;
      rest.erase(it);
    }
    q.add(rest, ca / cb);
  }
  return q;
}

int64_t floor_div(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/// Reads canonical (or any well-formed) expression text back.
class Parser {
 public:
  explicit Parser(const std::string& s) : s_(s) {}

  std::optional<Poly> whole() {
    auto p = sum();
    if (!p || i_ != s_.size()) return std::nullopt;
    return p;
  }

 private:
  std::optional<Poly> sum() {
    Poly total;
    int64_t sign = 1;
    if (peek('-')) ++i_, sign = -1;
    while (true) {
      auto t = product();
      if (!t) return std::nullopt;
      total = add(std::move(total), *t, sign);
      if (peek('+'))
        sign = 1;
      else if (peek('-'))
        sign = -1;
      else
        return total;
      ++i_;
    }
  }

  std::optional<Poly> product() {
    auto p = factor();
    while (p && peek('*')) {
      ++i_;
      auto f = factor();
      if (!f) return std::nullopt;
      p = *p * *f;
    }
    return p;
  }

  std::optional<Poly> factor() {
    if (i_ >= s_.size()) return std::nullopt;
    if (s_[i_] == '(') {
      ++i_;
      auto a = sum();
      if (!a) return std::nullopt;
      if (peek('/')) {
        ++i_;
        auto b = sum();
        if (!b || !peek(')')) return std::nullopt;
        ++i_;
        return floor_quotient(*a, *b);
      }
      if (!peek(')')) return std::nullopt;
      ++i_;
      return a;
    }
    const size_t b = i_;
    while (i_ < s_.size() && !is_operator(s_[i_])) ++i_;
    if (b == i_) return std::nullopt;
    const std::string tok = s_.substr(b, i_ - b);
    if (std::all_of(tok.begin(), tok.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return number(std::stoll(tok));
    return atom(tok);
  }

  bool peek(char c) const { return i_ < s_.size() && s_[i_] == c; }

 public:
  /// floor(a / b): a number, an exact quotient, or an opaque atom. By a
  /// positive number, the terms it divides leave the quotient first,
  /// floor((c*x + r) / c) = x + floor(r / c) for integer x, so a conv whose
  /// window equals its stride, ((seq-14)/14)+1, is the (seq/14) a Resize to
  /// seq // 14 computes.
  static std::optional<Poly> floor_quotient(const Poly& a, const Poly& b) {
    if (b.is_number() && b.number() == 0) return std::nullopt;
    if (a.is_number() && b.is_number()) return number(floor_div(a.number(), b.number()));
    if (auto q = exact_quotient(a, b)) return q;
    if (b.is_number() && b.number() > 0) {
      Poly whole, rest;
      for (const auto& [m, c] : a.terms) {
        if (c % b.number() == 0)
          whole.add(m, c / b.number());
        else
          rest.add(m, c);
      }
      if (!whole.terms.empty()) {
        auto r = floor_quotient(rest, b);
        if (!r) return std::nullopt;
        return add(std::move(whole), *r, 1);
      }
    }
    return atom("(" + poly_text(a) + "/" + poly_text(b) + ")");
  }

 private:
  const std::string& s_;
  size_t i_ = 0;
};

/// The polynomial a known SymInt's text or number stands for.
std::optional<Poly> to_poly(bool known, int64_t n, const std::string& text) {
  if (!known) return std::nullopt;
  if (text.empty()) return number(n);
  if (text[0] != '(') {
    if (std::any_of(text.begin(), text.end(), is_operator)) return std::nullopt;
    return atom(text);
  }
  return Parser(text).whole();
}

}  // namespace

// The friends below build SymInts from polys through this.
struct SymIntAccess {
  static SymInt from(const Poly& p) {
    SymInt s;
    s.known_ = true;
    if (p.is_number())
      s.number_ = p.number();
    else
      s.text_ = poly_text(p);
    return s;
  }
  static std::optional<Poly> poly(const SymInt& s) { return to_poly(s.known_, s.number_, s.text_); }
};

SymInt SymInt::of(const Dim& d) {
  if (d.is_static()) return SymInt(d.value());
  if (!d.is_symbolic()) return SymInt();
  SymInt s;
  s.known_ = true;
  s.text_ = d.symbol_name();
  // An expression's name in its canonical form, so equal values compare equal.
  if (s.text_[0] == '(')
    if (auto p = SymIntAccess::poly(s)) return SymIntAccess::from(*p);
  return s;
}

Dim SymInt::dim() const {
  if (!known_) return Dim::unknown();
  if (text_.empty()) return number_ >= 0 ? Dim(number_) : Dim::unknown();
  return Dim::symbol(text_);
}

std::string SymInt::to_string() const {
  if (!known_) return "?";
  return text_.empty() ? std::to_string(number_) : text_;
}

namespace {

template <class F>
SymInt combine(const SymInt& a, const SymInt& b, F f) {
  auto pa = SymIntAccess::poly(a), pb = SymIntAccess::poly(b);
  if (!pa || !pb) return SymInt();
  std::optional<Poly> r = f(*pa, *pb);
  return r ? SymIntAccess::from(*r) : SymInt();
}

}  // namespace

SymInt operator+(const SymInt& a, const SymInt& b) {
  if (a.is_number() && b.is_number()) return a.number() + b.number();
  return combine(a, b, [](const Poly& x, const Poly& y) { return std::optional(add(x, y, 1)); });
}

SymInt operator-(const SymInt& a, const SymInt& b) {
  if (a.is_number() && b.is_number()) return a.number() - b.number();
  return combine(a, b, [](const Poly& x, const Poly& y) { return std::optional(add(x, y, -1)); });
}

SymInt operator*(const SymInt& a, const SymInt& b) {
  if (a.is_number() && b.is_number()) return a.number() * b.number();
  return combine(a, b, [](const Poly& x, const Poly& y) { return std::optional(x * y); });
}

SymInt operator/(const SymInt& a, const SymInt& b) {
  return combine(a, b, [](const Poly& x, const Poly& y) { return Parser::floor_quotient(x, y); });
}

std::optional<SymInt> exact_div(const SymInt& a, const SymInt& b) {
  if (a.is_number() && b.is_number()) {
    if (b.number() == 0 || a.number() % b.number() != 0) return std::nullopt;
    return SymInt(a.number() / b.number());
  }
  auto pa = SymIntAccess::poly(a), pb = SymIntAccess::poly(b);
  if (!pa || !pb) return std::nullopt;
  auto q = exact_quotient(*pa, *pb);
  if (!q) return std::nullopt;
  return SymIntAccess::from(*q);
}

bool is_derived(const Dim& d) {
  return d.is_symbolic() && d.symbol_name()[0] == '(';
}

Dim dim_from_name(const std::string& name) {
  if (name.empty() || std::none_of(name.begin(), name.end(), is_operator)) return Dim::symbol(name);
  std::string text = "(";
  for (size_t i = 0; i < name.size(); ++i) {
    if (name[i] == ' ') continue;
    text += name[i];
    if (name[i] == '/' && i + 1 < name.size() && name[i + 1] == '/') ++i;  // `//`: floor
  }
  text += ")";
  const std::optional<Poly> p = Parser(text).whole();
  return p ? SymIntAccess::from(*p).dim() : Dim::symbol(name);
}

namespace {

std::optional<SymTree> tree_of(const Poly& p);

std::optional<SymTree> atom_tree(const std::string& a) {
  SymTree t;
  if (a[0] != '(') {
    t.kind = SymTree::Kind::kSymbol;
    t.symbol = a;
    return t;
  }
  // A floor quotient's text: "(" A "/" B ")", A and B each an atom or in parentheses.
  size_t depth = 0, slash = std::string::npos;
  for (size_t i = 1; i + 1 < a.size() && slash == std::string::npos; ++i) {
    if (a[i] == '(') ++depth;
    if (a[i] == ')') --depth;
    if (a[i] == '/' && depth == 0) slash = i;
  }
  if (slash == std::string::npos) return std::nullopt;
  auto x = Parser(a.substr(1, slash - 1)).whole();
  auto y = Parser(a.substr(slash + 1, a.size() - slash - 2)).whole();
  if (!x || !y) return std::nullopt;
  auto tx = tree_of(*x), ty = tree_of(*y);
  if (!tx || !ty) return std::nullopt;
  t.kind = SymTree::Kind::kFloorDiv;
  t.args = {std::move(*tx), std::move(*ty)};
  return t;
}

std::optional<SymTree> tree_of(const Poly& p) {
  SymTree sum;
  sum.kind = SymTree::Kind::kSum;
  for (const auto& [m, c] : p.terms) {
    SymTree prod;
    prod.kind = SymTree::Kind::kProduct;
    SymTree coef;
    coef.number = c;
    prod.args.push_back(coef);
    for (const std::string& a : m) {
      auto t = atom_tree(a);
      if (!t) return std::nullopt;
      prod.args.push_back(std::move(*t));
    }
    // A product of one factor is that factor; of none, its coefficient.
    if (prod.args.size() == 2 && c == 1) prod = std::move(prod.args[1]);
    if (prod.args.size() == 1) prod = std::move(prod.args[0]);
    sum.args.push_back(std::move(prod));
  }
  if (sum.args.empty()) return SymTree{};
  if (sum.args.size() == 1) return std::move(sum.args[0]);
  return sum;
}

std::optional<int64_t> eval_tree(const SymTree& t, const std::map<std::string, int64_t>& b) {
  switch (t.kind) {
    case SymTree::Kind::kNumber:
      return t.number;
    case SymTree::Kind::kSymbol: {
      auto it = b.find(t.symbol);
      if (it == b.end()) return std::nullopt;
      return it->second;
    }
    case SymTree::Kind::kFloorDiv: {
      auto x = eval_tree(t.args[0], b), y = eval_tree(t.args[1], b);
      if (!x || !y || *y == 0) return std::nullopt;
      return floor_div(*x, *y);
    }
    default: {
      const bool sum = t.kind == SymTree::Kind::kSum;
      int64_t r = sum ? 0 : 1;
      for (const SymTree& a : t.args) {
        auto v = eval_tree(a, b);
        if (!v) return std::nullopt;
        r = sum ? r + *v : r * *v;
      }
      return r;
    }
  }
}

}  // namespace

std::optional<SymTree> sym_tree(const Dim& d) {
  if (d.is_static()) return SymTree{SymTree::Kind::kNumber, d.value(), "", {}};
  if (!d.is_symbolic()) return std::nullopt;
  if (!is_derived(d)) return SymTree{SymTree::Kind::kSymbol, 0, d.symbol_name(), {}};
  auto p = Parser(d.symbol_name()).whole();
  if (!p) return std::nullopt;
  return tree_of(*p);
}

std::optional<int64_t> sym_eval(const Dim& d, const std::map<std::string, int64_t>& bindings) {
  if (!d.is_symbolic() && !d.is_static()) return std::nullopt;
  if (d.is_symbolic() && !is_derived(d)) {
    auto it = bindings.find(d.symbol_name());
    if (it == bindings.end()) return std::nullopt;
    return it->second;
  }
  auto t = sym_tree(d);
  if (!t) return std::nullopt;
  return eval_tree(*t, bindings);
}

namespace {

using Range = std::pair<int64_t, int64_t>;

/// The least and most of the four products or floor quotients of two ranges' ends.
template <class F>
std::optional<Range> corners(const Range& x, const Range& y, F f) {
  std::optional<Range> r;
  for (int64_t a : {x.first, x.second})
    for (int64_t b : {y.first, y.second}) {
      const std::optional<int64_t> v = f(a, b);
      if (!v) return std::nullopt;
      r = r ? Range{std::min(r->first, *v), std::max(r->second, *v)} : Range{*v, *v};
    }
  return r;
}

std::optional<Range> range_tree(const SymTree& t, const std::map<std::string, int64_t>& most) {
  switch (t.kind) {
    case SymTree::Kind::kNumber:
      return Range{t.number, t.number};
    case SymTree::Kind::kSymbol: {
      auto it = most.find(t.symbol);
      if (it == most.end() || it->second < 0) return std::nullopt;
      return Range{0, it->second};
    }
    case SymTree::Kind::kFloorDiv: {
      auto x = range_tree(t.args[0], most), y = range_tree(t.args[1], most);
      if (!x || !y || y->first <= 0) return std::nullopt;
      return corners(
          *x, *y, [](int64_t a, int64_t b) -> std::optional<int64_t> { return floor_div(a, b); });
    }
    default: {
      const bool sum = t.kind == SymTree::Kind::kSum;
      std::optional<Range> r = sum ? Range{0, 0} : Range{1, 1};
      for (const SymTree& a : t.args) {
        auto v = range_tree(a, most);
        if (!v) return std::nullopt;
        if (sum) {
          Range s;
          if (__builtin_add_overflow(r->first, v->first, &s.first) ||
              __builtin_add_overflow(r->second, v->second, &s.second))
            return std::nullopt;
          r = s;
        } else {
          r = corners(*r, *v, [](int64_t a, int64_t b) -> std::optional<int64_t> {
            int64_t p = 0;
            if (__builtin_mul_overflow(a, b, &p)) return std::nullopt;
            return p;
          });
          if (!r) return std::nullopt;
        }
      }
      return r;
    }
  }
}

}  // namespace

std::optional<std::pair<int64_t, int64_t>> sym_range(const Dim& d,
                                                     const std::map<std::string, int64_t>& most) {
  auto t = sym_tree(d);
  if (!t) return std::nullopt;
  return range_tree(*t, most);
}

}  // namespace hone::ops
