// Session: settings changed through the extended protocol (SET, RESET, set_config(), savepoints
// sent as Parse/Bind/Execute, in any result format) count for the session like a Query's, once
// their Execute completes (docs/architecture.md §5.7).
#include <utility>

#include "session/session.h"

namespace sw::session {

// The Bind being forwarded names `statement`: its facts ride on the next Execute when it changes
// settings.
void Session::note_bound_settings(std::string_view statement) {
  request_.bound_settings.reset();
  std::shared_ptr<const parser::QueryFacts> facts;
  if (statement.empty()) {
    facts = profile_.unnamed.facts;
  } else if (const PreparedStatement* prepared = profile_.statements.find(statement)) {
    facts = prepared->facts;
    if (facts == nullptr) {
      auto analyzed = parser::analyze(prepared->query);
      if (analyzed) facts = std::move(*analyzed);
    }
  }
  if (facts == nullptr) return;
  profile_.schema_changes.note_sent(*facts);  // DDL run again by a Bind of its statement
  if (changes_settings(*facts)) request_.bound_settings = std::move(facts);
}

void Session::expect_execute() {
  Expectation e;
  e.owed = Owed::Execute;
  e.settings = std::move(request_.bound_settings);
  txn_.leg.tracker.expect(std::move(e), nullptr);
}

// The Execute completed (CommandComplete): its statements count in the transaction in progress.
void Session::on_execute_settings(const parser::QueryFacts& facts) {
  for (const parser::StatementFacts& statement : facts.statements) profile_.settings.on_statement(statement);
}

}  // namespace sw::session
