// Facts templates for the normalized statement cache (internal to sw_parser).
//
// A template is the analyzed facts of one text plus, for every located value in them, where it
// sits in the text's normalized key (sql_lexer.h). Another text with the same key parses to the
// same tree up to its literal values, so its facts are the template's with each literal's text
// and every location re-read from the new text: no parse. make_template() refuses a text unless
// every literal the scanner found is a constant of libpg_query's tree (`constants`: the
// locations of every A_Const), so the scanner is checked against the real parser on each entry.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "parser/analyze.h"
#include "parser/sql_lexer.h"

namespace sw::parser::detail {

struct FactsTemplate {
  struct Fix {
    uint32_t key_offset = 0;  // the value's location, as an offset in the key
    int32_t slot = -1;        // literal slot whose text it takes; -1: location only
    bool negated = false;     // a number PostgreSQL folded a unary minus into
  };
  std::shared_ptr<const QueryFacts> facts;
  std::vector<Fix> fixes;  // one per located value, in for_each_value order
  std::vector<std::pair<uint32_t, uint32_t>> statement_spans;  // key offsets of each text
};

// `spans`: each statement's text as [begin, end) offsets in `sql`.
std::shared_ptr<const FactsTemplate> make_template(std::string_view sql, const NormalizedSql& normalized,
                                                   std::shared_ptr<const QueryFacts> facts,
                                                   const std::vector<int>& constants,
                                                   const std::vector<std::pair<uint32_t, uint32_t>>& spans);

// The facts of `sql`, whose normalized key is the template's.
std::shared_ptr<const QueryFacts> instantiate(const FactsTemplate& tmpl, std::string_view sql,
                                              const NormalizedSql& normalized);

}  // namespace sw::parser::detail
