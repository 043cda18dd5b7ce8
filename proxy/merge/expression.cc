#include "merge/expression.h"

#include <algorithm>
#include <cmath>

#include "merge/expression_number.h"
#include "merge/value.h"

namespace sw::merge {
namespace {

using Kind = Expression::Kind;
using namespace detail;  // the numbers it computes with (expression_number.h)

// A CASE condition's node: a comparison, IS [NOT] NULL, AND, OR, NOT (boolean).
bool is_condition(Kind kind) {
  switch (kind) {
    case Kind::Equal:
    case Kind::NotEqual:
    case Kind::Less:
    case Kind::LessEqual:
    case Kind::Greater:
    case Kind::GreaterEqual:
    case Kind::IsNull:
    case Kind::IsNotNull:
    case Kind::And:
    case Kind::Or:
    case Kind::Not: return true;
    default: return false;
  }
}

bool is_comparison(Kind kind) { return is_condition(kind) && kind < Kind::IsNull; }

// Whether a comparison of `kind` holds for two values in the order `order` (<0, 0, >0).
bool holds(Kind kind, int order) {
  switch (kind) {
    case Kind::Equal: return order == 0;
    case Kind::NotEqual: return order != 0;
    case Kind::Less: return order < 0;
    case Kind::LessEqual: return order <= 0;
    case Kind::Greater: return order > 0;
    default: return order >= 0;
  }
}

// A CASE's result that is text: a string literal, or a CASE of them.
bool text_result(const Expression& e) { return e.kind == Kind::Text || e.kind == Kind::Case; }

class Evaluator {
 public:
  Evaluator(const std::vector<uint32_t>& types, const std::vector<BindParameter>& parameters, const Row* row)
      : types_(types), parameters_(parameters), row_(row) {}

  // The node's type; `hint`: the type an operand of unknown type takes (0: none).
  Result<uint32_t> type(const Expression& e, uint32_t hint) const;
  Result<Number> value(const Expression& e, uint32_t hint) const;

 private:
  Result<uint32_t> number_type(const Expression& e, uint32_t hint) const {
    auto t = type(e, hint);
    if (t && *t != 0 && rank(*t) < 0)
      return unsupported(std::string("reads a value of type ") + type_name(*t));
    return t;
  }
  // An operator's operand types: an unknown one takes the other's.
  Result<std::pair<uint32_t, uint32_t>> operands(const Expression& a, const Expression& b) const;
  Result<Number> round(const Expression& e) const;
  // abs, ceil, floor of one value of the node's type `type`.
  Result<Number> unary_function(const Expression& e, uint32_t type) const;
  // greatest / least: the first of the largest (smallest) non-NULL arguments in `type`.
  Result<Number> extreme(const Expression& e, uint32_t type) const;
  Result<Number> parameter(const Expression& e, uint32_t type) const;
  Result<Number> nullif(const Expression& e, uint32_t type) const;
  // CASE: its results' common type as select_common_type resolves it (numbers: the widest;
  // string literals: text; all NULL: text); 0A000 for text beside numbers.
  Result<uint32_t> case_type(const Expression& e) const;
  Result<Number> case_value(const Expression& e, uint32_t type) const;
  // A condition's type (bool) once its operands are checked.
  Result<uint32_t> condition_type(const Expression& e) const;
  // A condition: true, false or unknown (nullopt), in SQL's three-valued logic.
  Result<std::optional<bool>> truth(const Expression& e) const;
  Result<std::optional<std::pair<Number, Number>>> operands_in(const Expression& e, uint32_t to) const;
  Result<std::optional<bool>> comparison(const Expression& e) const;
  Result<bool> is_null(const Expression& e) const;

  const std::vector<uint32_t>& types_;
  const std::vector<BindParameter>& parameters_;
  const Row* row_;
};

Result<std::pair<uint32_t, uint32_t>> Evaluator::operands(const Expression& a, const Expression& b) const {
  auto left = number_type(a, 0);
  if (!left) return left.status();
  auto right = number_type(b, *left);
  if (!right) return right.status();
  if (*left == 0) {
    left = number_type(a, *right);
    if (!left) return left.status();
  }
  if (*left == 0 || *right == 0) return unsupported("has an operator between two values of unknown type");
  return std::pair{*left, *right};
}

Result<uint32_t> Evaluator::type(const Expression& e, uint32_t hint) const {
  switch (e.kind) {
    case Kind::Output:
      if (e.output < 0 || static_cast<size_t>(e.output) >= types_.size())
        return Status::proxy("XX000", "an expression reads an output column the merge does not have");
      return types_[static_cast<size_t>(e.output)];
    case Kind::Constant: return e.constant ? constant_type(*e.constant) : hint;
    case Kind::Param: {
      const auto index = static_cast<size_t>(e.param - 1);
      if (e.param > 0 && index < parameters_.size() && parameters_[index].type != 0)
        return parameters_[index].type;
      return hint;
    }
    case Kind::Negate:
    case Kind::Abs: return number_type(e.args.at(0), hint);
    case Kind::Cast: return e.type;
    case Kind::Round:
    case Kind::Ceil:
    case Kind::Floor: {  // numeric, or float8 for the others (its category's preferred type)
      if (e.args.size() == 2) return static_cast<uint32_t>(oid::kNumeric);
      auto arg = number_type(e.args.at(0), 0);
      if (!arg) return arg.status();
      if (*arg == 0) return unsupported("rounds a value of unknown type");
      return *arg == oid::kNumeric ? oid::kNumeric : oid::kFloat8;
    }
    case Kind::Coalesce:
    case Kind::Greatest:
    case Kind::Least: {
      uint32_t common = 0;
      for (const Expression& arg : e.args) {
        auto t = number_type(arg, 0);
        if (!t) return t.status();
        if (*t != 0) common = common == 0 ? *t : wider(common, *t);
      }
      return common == 0 ? hint : common;
    }
    case Kind::Nullif: {
      auto both = operands(e.args.at(0), e.args.at(1));
      if (!both) return both.status();
      return both->first;
    }
    case Kind::Case: return case_type(e);
    case Kind::Text: return static_cast<uint32_t>(oid::kText);
    default: {
      if (is_condition(e.kind)) return condition_type(e);
      auto both = operands(e.args.at(0), e.args.at(1));
      if (!both) return both.status();
      return wider(both->first, both->second);
    }
  }
}

Result<Number> Evaluator::round(const Expression& e) const {
  if (e.args.size() == 1) {
    auto t = type(e, 0);
    if (!t) return t.status();
    auto arg = value(e.args[0], *t);
    if (!arg) return arg.status();
    auto converted = convert(*arg, *t);
    if (!converted || converted->null) return converted;
    if (*t == oid::kFloat8) converted->real = std::nearbyint(converted->real);  // rint: to even
    if (*t == oid::kNumeric) converted->decimal = converted->decimal.round(0);
    return converted;
  }
  auto x_type = number_type(e.args[0], oid::kNumeric);
  auto n_type = number_type(e.args[1], oid::kInt4);
  if (!x_type) return x_type.status();
  if (!n_type) return n_type.status();
  if (*x_type == oid::kFloat8 || (*n_type != oid::kInt4 && *n_type != oid::kInt2))
    return unsupported("calls round() with other than numeric and integer arguments");
  auto x = value(e.args[0], *x_type);
  if (!x) return x.status();
  auto n = value(e.args[1], *n_type);
  if (!n) return n.status();
  auto out = convert(*x, oid::kNumeric);
  if (!out || out->null) return out;
  if (n->null) return Number{oid::kNumeric};
  const auto scale = static_cast<int>(std::max<Int128>(-2000, std::min<Int128>(2000, n->integer)));
  out->decimal = out->decimal.round(scale);
  return out;
}

Result<Number> Evaluator::unary_function(const Expression& e, uint32_t type) const {
  auto arg = value(e.args.at(0), e.kind == Kind::Abs ? type : 0);
  if (!arg) return arg.status();
  auto x = convert(*arg, type);
  if (!x || x->null) return x;
  if (is_integer(type)) {  // abs only: int4abs's range error for the smallest value
    x->integer = x->integer < 0 ? -x->integer : x->integer;
    if (!fits(x->integer, type)) return out_of_range(type);
    return x;
  }
  if (type == oid::kFloat8) {
    x->real = e.kind == Kind::Abs    ? std::fabs(x->real)
              : e.kind == Kind::Ceil ? std::ceil(x->real)
                                     : std::floor(x->real);
    return x;
  }
  Decimal& d = x->decimal;
  if (d.is_nan()) return x;
  if (d.is_special()) return unsupported("takes a function of an infinite numeric");
  if (e.kind == Kind::Abs) {
    d = absolute(d);
    return x;
  }
  Decimal whole = d.round(0);  // ceil_var / floor_var: the integer at or above (below) it
  if (e.kind == Kind::Ceil && whole.compare(d) < 0) whole = whole.add(Decimal::from_int(1));
  if (e.kind == Kind::Floor && whole.compare(d) > 0) whole = whole.subtract(Decimal::from_int(1));
  d = whole;
  return x;
}

Result<Number> Evaluator::extreme(const Expression& e, uint32_t type) const {
  Number best;
  best.type = type;
  for (const Expression& arg : e.args) {  // every argument is evaluated, as ExecEvalMinMax does
    auto v = value(arg, type);
    if (!v) return v.status();
    auto x = convert(*v, type);
    if (!x) return x.status();
    if (x->null) continue;
    if (best.null) {
      best = *x;
      continue;
    }
    const int c = compare_numbers(*x, best);
    if (e.kind == Kind::Greatest ? c > 0 : c < 0) best = *x;
  }
  return best;
}

Result<Number> Evaluator::parameter(const Expression& e, uint32_t type) const {
  const auto index = static_cast<size_t>(e.param - 1);
  if (e.param <= 0 || index >= parameters_.size())
    return Status::client("08P01", "the Bind message has no parameter $" + std::to_string(e.param));
  const BindParameter& p = parameters_[index];
  if (!p.value) return Number{type};
  if (p.format == 0) return parse_number(type, *p.value);
  auto text = binary_to_text(type, *p.value);
  if (!text) return text.status();
  return parse_number(type, *text);
}

// nullif(a, b): NULL when a equals b compared in their common type, else a.
Result<Number> Evaluator::nullif(const Expression& e, uint32_t type) const {
  auto both = operands(e.args.at(0), e.args.at(1));
  if (!both) return both.status();
  auto a = value(e.args[0], both->first);
  if (!a || a->null) return a;
  auto b = value(e.args[1], both->second);
  if (!b) return b.status();
  if (b->null) return a;
  const uint32_t common = wider(both->first, both->second);
  auto x = convert(*a, common);
  auto y = convert(*b, common);
  if (!x) return x.status();
  if (!y) return y.status();
  if (compare_numbers(*x, *y) != 0) return a;
  return Number{type};
}

Result<uint32_t> Evaluator::case_type(const Expression& e) const {
  uint32_t common = 0;
  bool text = false;
  std::vector<const Expression*> results;  // every THEN, then the ELSE
  for (size_t i = 1; i < e.args.size(); i += 2) results.push_back(&e.args[i]);
  results.push_back(&e.args.back());
  for (const Expression* result : results) {
    auto t = text_result(*result) ? type(*result, 0) : number_type(*result, 0);
    if (!t) return t.status();
    text = text || *t == oid::kText;
    if (*t != 0 && *t != oid::kText) common = common == 0 ? *t : wider(common, *t);
  }
  for (size_t i = 0; i + 1 < e.args.size(); i += 2) {
    auto t = type(e.args[i], 0);
    if (!t) return t.status();
    if (*t != oid::kBool) return unsupported("has a CASE condition that is not a comparison");
  }
  if (text && common != 0)
    return unsupported("has a CASE whose results mix text and numbers (PostgreSQL would cast the text)");
  return common == 0 ? oid::kText : common;
}

Result<Number> Evaluator::case_value(const Expression& e, uint32_t type) const {
  size_t chosen = e.args.size() - 1;  // ELSE
  for (size_t i = 0; i + 1 < e.args.size(); i += 2) {
    auto met = truth(e.args[i]);  // a condition that is NULL does not hold
    if (!met) return met.status();
    if (met->value_or(false)) {
      chosen = i + 1;
      break;
    }
  }
  auto v = value(e.args[chosen], type);
  if (!v) return v.status();
  return type == oid::kText ? v : convert(*v, type);
}

Result<uint32_t> Evaluator::condition_type(const Expression& e) const {
  if (is_comparison(e.kind)) {
    auto both = operands(e.args.at(0), e.args.at(1));
    if (!both) return both.status();
  } else if (e.kind == Kind::IsNull || e.kind == Kind::IsNotNull) {
    const Expression& arg = e.args.at(0);
    auto t = text_result(arg) ? type(arg, 0) : number_type(arg, 0);
    if (!t) return t.status();
  } else {
    for (const Expression& arg : e.args) {
      auto t = type(arg, 0);
      if (!t) return t.status();
      if (*t != oid::kBool) return unsupported("combines with AND, OR or NOT what is not a condition");
    }
  }
  return static_cast<uint32_t>(oid::kBool);
}

// A binary node's two operands, evaluated and converted to type `to` (0: the wider of theirs);
// nullopt when either is NULL.
Result<std::optional<std::pair<Number, Number>>> Evaluator::operands_in(const Expression& e,
                                                                        uint32_t to) const {
  auto both = operands(e.args.at(0), e.args.at(1));
  if (!both) return both.status();
  auto a = value(e.args[0], both->first);
  if (!a) return a.status();
  auto b = value(e.args[1], both->second);
  if (!b) return b.status();
  if (a->null || b->null) return std::optional<std::pair<Number, Number>>();
  if (to == 0) to = wider(both->first, both->second);
  auto x = convert(*a, to);
  if (!x) return x.status();
  auto y = convert(*b, to);
  if (!y) return y.status();
  return std::optional<std::pair<Number, Number>>(std::pair{std::move(*x), std::move(*y)});
}

Result<std::optional<bool>> Evaluator::comparison(const Expression& e) const {
  auto values = operands_in(e, 0);
  if (!values) return values.status();
  if (!*values) return std::optional<bool>();
  return std::optional<bool>(holds(e.kind, compare_numbers((*values)->first, (*values)->second)));
}

Result<bool> Evaluator::is_null(const Expression& e) const {
  auto t = type(e, 0);
  if (!t) return t.status();
  if (*t == 0 && e.kind == Kind::Param) {  // a parameter of unknown type: only whether it is NULL
    const auto index = static_cast<size_t>(e.param - 1);
    if (e.param <= 0 || index >= parameters_.size())
      return Status::client("08P01", "the Bind message has no parameter $" + std::to_string(e.param));
    return !parameters_[index].value.has_value();
  }
  if (*t == 0) return true;  // NULL
  auto v = value(e, *t);
  if (!v) return v.status();
  return v->null;
}

// AND: false wins, then unknown; OR: true wins, then unknown; NOT: unknown stays unknown. Every
// operand is evaluated in order until one decides (PostgreSQL may stop there too).
Result<std::optional<bool>> Evaluator::truth(const Expression& e) const {
  if (is_comparison(e.kind)) return comparison(e);
  if (e.kind == Kind::IsNull || e.kind == Kind::IsNotNull) {
    auto null = is_null(e.args.at(0));
    if (!null) return null.status();
    return std::optional<bool>(*null == (e.kind == Kind::IsNull));
  }
  if (e.kind == Kind::Not) {
    auto inner = truth(e.args.at(0));
    if (!inner || !inner->has_value()) return inner;
    return std::optional<bool>(!**inner);
  }
  const bool is_and = e.kind == Kind::And;
  bool unknown = false;
  for (const Expression& arg : e.args) {
    auto result = truth(arg);
    if (!result) return result.status();
    if (!result->has_value()) {
      unknown = true;
    } else if (**result != is_and) {
      return std::optional<bool>(!is_and);
    }
  }
  if (unknown) return std::optional<bool>();
  return std::optional<bool>(is_and);
}

Result<Number> Evaluator::value(const Expression& e, uint32_t hint) const {
  if (is_condition(e.kind)) return unsupported("computes a condition outside a CASE");
  const bool null_constant = e.kind == Kind::Constant && !e.constant;
  auto t = text_result(e) || null_constant ? type(e, hint) : number_type(e, hint);
  if (!t) return t.status();
  if (*t == 0) return unsupported("has a value of unknown type");
  Number null;
  null.type = *t;
  switch (e.kind) {
    case Kind::Output: {
      const auto& text = (*row_)[static_cast<size_t>(e.output)];
      return text ? parse_number(*t, *text) : null;
    }
    case Kind::Constant: return e.constant ? parse_number(constant_type(*e.constant), *e.constant) : null;
    case Kind::Param: return parameter(e, *t);
    case Kind::Negate: {
      auto arg = value(e.args.at(0), *t);
      if (!arg || arg->null) return arg;
      if (is_integer(*t)) return integer_operation(Kind::Subtract, 0, arg->integer, *t);
      if (*t == oid::kFloat8) arg->real = -arg->real;
      if (*t == oid::kNumeric && !arg->decimal.is_nan()) {
        if (arg->decimal.is_special()) return unsupported("negates an infinite numeric");
        arg->decimal = arg->decimal.sign() == 0 ? arg->decimal : Decimal::from_int(0).subtract(arg->decimal);
      }
      return arg;
    }
    case Kind::Cast: {
      auto arg = value(e.args.at(0), *t);
      if (!arg) return arg.status();
      return convert(*arg, *t);
    }
    case Kind::Round: return round(e);
    case Kind::Abs:
    case Kind::Ceil:
    case Kind::Floor: return unary_function(e, *t);
    case Kind::Greatest:
    case Kind::Least: return extreme(e, *t);
    case Kind::Coalesce:
      for (const Expression& arg : e.args) {  // later arguments are not evaluated
        auto v = value(arg, *t);
        if (!v) return v.status();
        if (!v->null) return convert(*v, *t);
      }
      return null;
    case Kind::Nullif: return nullif(e, *t);
    case Kind::Case: return case_value(e, *t);
    case Kind::Text: {
      Number text;
      text.type = oid::kText;
      text.null = false;
      text.text = e.constant.value_or("");
      return text;
    }
    default: {
      auto values = operands_in(e, *t);
      if (!values) return values.status();
      if (!*values) return null;  // strict operators are not called
      const auto& [x, y] = **values;
      if (is_integer(*t)) return integer_operation(e.kind, x.integer, y.integer, *t);
      if (*t == oid::kFloat8) return real_operation(e.kind, x.real, y.real);
      return decimal_operation(e.kind, x.decimal, y.decimal);
    }
  }
}

}  // namespace

Result<uint32_t> expression_type(const Expression& expression, const std::vector<uint32_t>& types,
                                 const std::vector<BindParameter>& parameters) {
  auto t = Evaluator(types, parameters, nullptr).type(expression, 0);
  if (!t) return t.status();
  if (rank(*t) < 0 && *t != oid::kText)
    return unsupported(*t == 0 ? "has a value of unknown type"
                               : std::string("gives a value of type ") + type_name(*t));
  return t;
}

Result<std::optional<std::string>> evaluate_expression(const Expression& expression, const Row& row,
                                                       const std::vector<uint32_t>& types,
                                                       const std::vector<BindParameter>& parameters) {
  auto v = Evaluator(types, parameters, &row).value(expression, 0);
  if (!v) return v.status();
  if (v->null) return std::optional<std::string>();
  if (is_integer(v->type)) return std::optional(std::to_string(static_cast<long long>(v->integer)));
  if (v->type == oid::kFloat8) return std::optional(format_float8(v->real));
  if (v->type == oid::kText) return std::optional(std::move(v->text));
  return std::optional(v->decimal.text());
}

}  // namespace sw::merge
