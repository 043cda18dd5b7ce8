#include "merge/having.h"

#include "merge/value.h"

namespace sw::merge {
namespace {

bool is_exact_number_type(uint32_t type_oid) {
  return type_oid == oid::kInt2 || type_oid == oid::kInt4 || type_oid == oid::kInt8 ||
         type_oid == oid::kNumeric;
}

bool holds(HavingTerm::Op op, int order) {
  switch (op) {
    case HavingTerm::Op::Eq: return order == 0;
    case HavingTerm::Op::Ne: return order != 0;
    case HavingTerm::Op::Lt: return order < 0;
    case HavingTerm::Op::Le: return order <= 0;
    case HavingTerm::Op::Gt: return order > 0;
    case HavingTerm::Op::Ge: return order >= 0;
  }
  return false;
}

// The column's value against the constant, both read as the column's type (or, for an exact
// number type, both as numeric when the constant is not an integer).
Result<std::optional<bool>> compare(const HavingTerm& term, const Row& row,
                                    const std::vector<uint32_t>& types, DateReading dates) {
  const auto column = static_cast<size_t>(term.column);
  if (column >= row.size() || column >= types.size())
    return Status::proxy("XX000", "HAVING column out of range in the scatter plan");
  const auto& value = row[column];
  if (!value || !term.constant) return std::optional<bool>();
  uint32_t type = types[column];
  // The constant is the client's input, whose zone abbreviations PostgreSQL reads from its
  // timezone_abbreviations table, not from the TimeZone's file: none are read here.
  auto constant = decode_text(type, *term.constant, DateReading{dates.day_first, nullptr});
  if (!constant && is_exact_number_type(type)) {
    type = oid::kNumeric;
    constant = decode_text(type, *term.constant);
  }
  if (!constant)
    return Status::client("0A000", "HAVING compares a " + std::string(type_name(types[column])) +
                                       " column with a constant shardwire cannot read as that type; cast the "
                                       "constant to the column's type");
  auto left = decode_text(type, *value, dates);
  if (!left) return left.status();
  return std::optional<bool>(holds(term.op, left->compare(*constant)));
}

}  // namespace

Result<std::optional<bool>> evaluate_having(const HavingTerm& term, const Row& row,
                                            const std::vector<uint32_t>& column_types, DateReading dates) {
  if (term.kind == HavingTerm::Kind::Compare) return compare(term, row, column_types, dates);
  // AND: false wins, then unknown; OR: true wins, then unknown; NOT: unknown stays unknown.
  const bool is_and = term.kind != HavingTerm::Kind::Or;
  bool unknown = false;
  for (const HavingTerm& child : term.children) {
    auto result = evaluate_having(child, row, column_types, dates);
    if (!result) return result.status();
    if (!result->has_value()) {
      unknown = true;
    } else if (term.kind == HavingTerm::Kind::Not) {
      return std::optional<bool>(!**result);
    } else if (**result != is_and) {
      return std::optional<bool>(!is_and);
    }
  }
  if (unknown) return std::optional<bool>();
  return std::optional<bool>(is_and);
}

Status bind_having_parameters(HavingTerm& term, const std::vector<BindParameter>& parameters,
                              const std::vector<uint32_t>& column_types) {
  for (HavingTerm& child : term.children) {
    if (Status s = bind_having_parameters(child, parameters, column_types); !s) return s;
  }
  if (term.kind != HavingTerm::Kind::Compare || term.param <= 0) return Status::ok();
  const auto index = static_cast<size_t>(term.param - 1);
  if (index >= parameters.size())
    return Status::client("08P01", "HAVING uses $" + std::to_string(term.param) + " but the Bind has " +
                                       std::to_string(parameters.size()) + " parameters");
  const BindParameter& parameter = parameters[index];
  term.constant.reset();
  if (!parameter.value) return Status::ok();
  if (parameter.format == 0) {
    term.constant = parameter.value;
    return Status::ok();
  }
  const auto column = static_cast<size_t>(term.column);
  const uint32_t type =
      parameter.type != 0 ? parameter.type : (column < column_types.size() ? column_types[column] : 0);
  auto text = binary_to_text(type, *parameter.value);
  if (!text) return text.status();
  term.constant = std::move(text.value());
  return Status::ok();
}

void having_columns(const HavingTerm& term, std::vector<int>& columns) {
  if (term.kind == HavingTerm::Kind::Compare) columns.push_back(term.column);
  for (const HavingTerm& child : term.children) having_columns(child, columns);
}

}  // namespace sw::merge
