// Session settings a client has made (startup parameters, SET, RESET), tracked so that whichever
// server runs the client's next transaction can be brought to the same state first. SETs made in
// a transaction count only once it commits, as on a real server.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "parser/analyze.h"

namespace sw::session {

class SessionState {
 public:
  // Startup packet parameters other than user/database/replication, and the settings of
  // "options" (-c name=value, -cname=value, --name=value; backslash escapes the next character),
  // become one SELECT of set_config(name, value, false) calls: PostgreSQL's meaning of the value.
  void set_startup(const std::vector<std::pair<std::string, std::string>>& params);

  // The SELECT of set_config calls that gives back the client's startup values after `statements`
  // reset them on a server (RESET name, RESET ALL, DISCARD ALL): a server's own defaults are
  // those of the proxy's login, not the client's. "" when no startup setting stays reset.
  std::string restore_startup(const std::vector<parser::StatementFacts>& statements) const;

  // A statement that completed without error, in the transaction in progress.
  void on_statement(const parser::StatementFacts& statement);
  // The transaction in progress ended: committed (ReadyForQuery 'I' after it) or rolled back.
  void end_transaction(bool committed);

  // The startup settings (lower-case name, value; the last of a name wins), as the client sent them.
  const std::vector<std::pair<std::string, std::string>>& startup_values() const { return startup_values_; }

  // The SQL that brings a freshly RESET server to this state ("" when there is nothing to do
  // besides RESET ALL). Also serves as the state's identity: equal text, equal state.
  const std::string& signature() const { return signature_; }

  // True for settings no client may change: they steer fencing and replication.
  static bool is_protected(std::string_view name);

 private:
  struct Setting {
    std::string name;  // lower-case
    std::string sql;   // statement that sets it
  };
  void apply(std::vector<Setting>& settings, const parser::StatementFacts& statement) const;
  void rebuild_signature();

  std::vector<std::pair<std::string, std::string>> startup_values_;  // lower-case name, value; last wins
  std::string startup_;  // the set_config SELECT of all of them, "" when the client set nothing
  std::vector<Setting> committed_;
  std::vector<Setting> pending_;  // committed_ as modified by the open transaction
  bool pending_dirty_ = false;
  std::string signature_;
};

// True when a Query's success changes what the session tracks after it: settings (SET, RESET,
// DISCARD), SQL-level prepared statements (PREPARE, DEALLOCATE). Only such a Query's facts are
// kept until its CommandComplete (Request::queries).
bool changes_tracked_state(const parser::QueryFacts& facts);

// Quotes a value as a SQL string literal ('...' with quotes doubled; E'' when it has a backslash).
std::string quote_literal(std::string_view value);

}  // namespace sw::session
