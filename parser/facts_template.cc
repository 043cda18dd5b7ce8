#include "parser/facts_template.h"

#include <algorithm>

namespace sw::parser::detail {
namespace {

// Every Value of the facts that may carry a literal or a location, in a fixed order.
template <typename Facts, typename F>
void for_each_value(Facts& facts, F&& f) {
  for (auto& statement : facts.statements) {
    for (auto& predicate : statement.predicates) {
      for (auto& value : predicate.values) f(value);
    }
    for (auto& assignment : statement.assignments) f(assignment.value);
    for (auto& call : statement.set_config_calls) {
      f(call.name);
      f(call.value);
      f(call.is_local);
    }
    f(statement.begin);
    for (auto& table : statement.tables) f(table.at);
    auto& select = statement.select;
    f(select.begin);
    f(select.limit);
    f(select.offset);
    for (auto& position : select.positions) f(position);
    for (auto& output : select.outputs) {
      f(output.call_begin);
      f(output.call_end);
      f(output.begin);
    }
    for (auto& insert : statement.inserts) {
      for (auto& row : insert.rows) {
        for (auto& value : row) f(value);
      }
      for (auto& value : insert.select_values) f(value);
    }
  }
}

// Facts holding text cut from the statement (an ORDER BY expression, an evaluable HAVING and its
// span, an ordered aggregate's separator and shard columns) that the fixes do not rewrite: such a statement
// is analyzed for every text, or a hit would carry another text's literals into the shards' SQL and the
// proxy's HAVING.
bool holds_literal_text(const QueryFacts& facts) {
  for (const auto& statement : facts.statements) {
    const SelectShape& select = statement.select;
    if (!select.having.empty() || select.having_begin >= 0) return true;
    for (const OrderItem& item : select.order_by) {
      if (!item.expression.empty()) return true;
    }
    for (const OutputItem& item : select.outputs) {
      if (item.ordered || item.expression) return true;  // its separator and shard columns; constants
    }
    if (!select.having_aggregates.empty()) return true;
    for (const OrderItem& item : select.order_by) {
      if (item.aggregate_output >= 0 || item.value_begin >= 0) return true;
    }
  }
  return false;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

}  // namespace

std::shared_ptr<const FactsTemplate> make_template(std::string_view sql, const NormalizedSql& normalized,
                                                   std::shared_ptr<const QueryFacts> facts,
                                                   const std::vector<int>& constants,
                                                   const std::vector<std::pair<uint32_t, uint32_t>>& spans) {
  // Which slot (and sign) each constant of the tree is; every slot must be one.
  struct Constant {
    int location;
    int slot;
    bool negated;
  };
  std::vector<Constant> found;
  std::vector<bool> confirmed(normalized.slots.size(), false);
  for (int location : constants) {
    if (location < 0) continue;
    int slot = slot_at(normalized, static_cast<uint32_t>(location));
    bool negated = false;
    if (slot < 0 && static_cast<size_t>(location) < sql.size() && sql[location] == '-') {
      size_t next = static_cast<size_t>(location) + 1;
      while (next < sql.size() && is_space(sql[next])) ++next;
      slot = slot_at(normalized, static_cast<uint32_t>(next));
      if (slot >= 0 && normalized.slots[static_cast<size_t>(slot)].kind == SlotKind::String) {
        slot = -1;
      }
      negated = slot >= 0;
    }
    if (slot < 0) continue;
    confirmed[static_cast<size_t>(slot)] = true;
    found.push_back({location, slot, negated});
  }
  for (bool ok : confirmed) {
    if (!ok) return nullptr;
  }
  std::sort(found.begin(), found.end(),
            [](const Constant& a, const Constant& b) { return a.location < b.location; });

  auto tmpl = std::make_shared<FactsTemplate>();
  bool consistent = true;
  for_each_value(*facts, [&](const Value& value) {
    if (value.location < 0) return;
    FactsTemplate::Fix fix;
    fix.at = key_offset_at(normalized, sql_to_key_offset(normalized, static_cast<uint32_t>(value.location)));
    auto it =
        std::lower_bound(found.begin(), found.end(), value.location,
                         [](const Constant& constant, int location) { return constant.location < location; });
    if (it != found.end() && it->location == value.location) {
      fix.slot = it->slot;
      fix.negated = it->negated;
    }
    // A literal must come from its slot, or be verbatim in the key (E'', NULL, TRUE, ...).
    if (fix.slot < 0 && (value.kind == ValueKind::String || value.kind == ValueKind::Number) &&
        slot_at(normalized, static_cast<uint32_t>(value.location)) >= 0) {
      consistent = false;
    }
    tmpl->fixes.push_back(fix);
  });
  if (!consistent || holds_literal_text(*facts)) return nullptr;
  for (const auto& [begin, end] : spans) {
    tmpl->statement_spans.emplace_back(key_offset_at(normalized, sql_to_key_offset(normalized, begin)),
                                       key_offset_at(normalized, sql_to_key_offset(normalized, end)));
  }
  tmpl->facts = std::move(facts);
  return tmpl;
}

namespace {

// An instance no one but the template holds, or nullptr. Instances are handed out and released
// only on the thread that owns the template (the statement cache is thread_local, and the facts
// it hands out stay on that worker), so use_count() == 1 means every other holder has finished
// with it: rewriting it cannot race with a reader. (ThreadSanitizer, which models the reference
// count, checks that no other thread ever holds one.)
std::shared_ptr<QueryFacts> unheld_instance(const FactsTemplate& tmpl) {
  for (const auto& instance : tmpl.instances) {
    if (instance.use_count() == 1) return instance;
  }
  return nullptr;
}

}  // namespace

std::shared_ptr<const QueryFacts> instantiate(const FactsTemplate& tmpl, std::string_view sql,
                                              const NormalizedSql& normalized, uint64_t hit) {
  const bool warm = tmpl.last_hit != 0 && hit - tmpl.last_hit <= kWarmHits;
  tmpl.last_hit = hit;
  std::shared_ptr<QueryFacts> facts = warm ? unheld_instance(tmpl) : nullptr;
  if (facts == nullptr) {
    facts = std::make_shared<QueryFacts>(*tmpl.facts);
    if (warm && tmpl.instances.size() < kMaxInstances) tmpl.instances.push_back(facts);
  }
  // The overlay: every located value's location and literal text, each statement's text.
  size_t next = 0;
  for_each_value(*facts, [&](Value& value) {
    if (value.location < 0) return;
    const FactsTemplate::Fix& fix = tmpl.fixes[next++];
    value.location = static_cast<int>(key_to_sql_offset(normalized, fix.at));
    if (fix.slot >= 0) {
      // Into the instance's own buffer: no allocation unless the value outgrows it.
      slot_value_into(sql, normalized.slots[static_cast<size_t>(fix.slot)], value.text);
      if (fix.negated) value.text.insert(value.text.begin(), '-');
    }
  });
  for (size_t i = 0; i < facts->statements.size() && i < tmpl.statement_spans.size(); ++i) {
    const uint32_t begin = key_to_sql_offset(normalized, tmpl.statement_spans[i].first);
    const uint32_t end = key_to_sql_offset(normalized, tmpl.statement_spans[i].second);
    facts->statements[i].text.assign(sql.substr(begin, end - begin));
  }
  return facts;
}

}  // namespace sw::parser::detail
