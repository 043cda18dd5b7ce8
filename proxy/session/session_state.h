// Session settings a client has made (startup parameters, SET, RESET, set_config(..., false) with
// literal arguments), tracked so that whichever server runs the client's next transaction can be
// brought to the same state first (docs/architecture.md §5.7). PostgreSQL's rules: a SET made in
// a transaction counts once it commits; ROLLBACK TO SAVEPOINT undoes the SETs made since the
// savepoint, RELEASE keeps them; SET LOCAL and set_config(..., true) end with their transaction;
// RESET ALL leaves role and session_authorization as they are, DISCARD ALL resets them too.
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

  // What a server runs before the signature to be as a fresh session is: RESET ALL leaves the
  // role and the session authorization alone, so they are reset first.
  static constexpr std::string_view kResetSql = "RESET SESSION AUTHORIZATION;RESET ROLE;RESET ALL;";
  // kResetSql followed by the signature: a server that ran it is in exactly this client's state.
  std::string reset_and_replay() const { return std::string(kResetSql) + signature_; }

  // The startup settings (lower-case name, value; the last of a name wins), as the client sent them.
  const std::vector<std::pair<std::string, std::string>>& startup_values() const { return startup_values_; }

  // The SQL that brings a freshly RESET server to this state ("" when there is nothing to do
  // besides RESET ALL). Also serves as the state's identity: equal text, equal state.
  const std::string& signature() const { return signature_; }

  // What sets `name` (lower-case) for the session now, the open transaction's SETs included: the
  // last SET's text, "=" and the startup value, or "" when the client never set it.
  std::string current(std::string_view name) const;

  // True for settings no client may change: they steer fencing and replication.
  static bool is_protected(std::string_view name);

 private:
  struct Setting {
    std::string name;  // lower-case
    std::string sql;   // statement that sets it
  };
  struct Savepoint {
    std::string name;
    std::vector<Setting> settings;  // pending_ as it was when the savepoint was made
  };
  void apply(std::vector<Setting>& settings, const parser::StatementFacts& statement) const;
  void on_savepoint(const parser::StatementFacts& statement);
  void rebuild_signature();

  std::vector<std::pair<std::string, std::string>> startup_values_;  // lower-case name, value; last wins
  std::string startup_;  // the set_config SELECT of all of them, "" when the client set nothing
  std::vector<Setting> committed_;
  std::vector<Setting> pending_;  // committed_ as modified by the open transaction
  bool pending_dirty_ = false;
  std::vector<Savepoint> savepoints_;  // of the open transaction, innermost last
  std::string signature_;
};

// The set_config(name, value, is_local) call as session state: with is_local a literal true a
// SET LOCAL (nothing after the transaction, whatever the value); with a literal name, value (a
// string or NULL) and is_local false a SET; any other is Unknown (the model cannot say what it
// leaves).
enum class SetConfigEffect { Session, Local, Unknown };
SetConfigEffect set_config_effect(const parser::SetConfigCall& call);

// True when a Query's success changes what the session tracks after it: settings (SET, RESET,
// DISCARD, set_config, savepoints), SQL-level prepared statements (PREPARE, DEALLOCATE). Only such
// a Query's facts are kept until its CommandComplete (Request::queries).
bool changes_tracked_state(const parser::QueryFacts& facts);

// True when a statement's success changes the settings SessionState tracks (SET, RESET, DISCARD
// ALL, savepoints, set_config): an extended-protocol Execute of one carries its facts until it
// completes (Expectation::settings).
bool changes_settings(const parser::QueryFacts& facts);

// Quotes a value as a SQL string literal ('...' with quotes doubled; E'' when it has a backslash).
std::string quote_literal(std::string_view value);

}  // namespace sw::session
