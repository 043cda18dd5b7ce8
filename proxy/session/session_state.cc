#include "session/session_state.h"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <optional>

namespace sw::session {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

bool is_identifier(std::string_view name) {
  if (name.empty()) return false;
  return std::all_of(name.begin(), name.end(),
                     [](unsigned char c) { return std::isalnum(c) || c == '_' || c == '.'; });
}

// "-c a=b -cc=d --e-f=g" -> {a,b}, {c,d}, {e_f,g}, as the server splits its options: words end at
// unescaped white space and a backslash takes the next character literally.
std::vector<std::pair<std::string, std::string>> split_options(std::string_view options) {
  std::vector<std::string> words;
  std::string word;
  for (size_t i = 0; i < options.size(); ++i) {
    char c = options[i];
    if (c == '\\' && i + 1 < options.size()) {
      word.push_back(options[++i]);
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      if (!word.empty()) words.push_back(std::move(word));
      word.clear();
    } else {
      word.push_back(c);
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  std::vector<std::pair<std::string, std::string>> settings;
  for (size_t i = 0; i < words.size(); ++i) {
    std::string_view w = words[i];
    if (w == "-c" && i + 1 < words.size())
      w = words[++i];
    else if (w.rfind("--", 0) == 0 || w.rfind("-c", 0) == 0)  // --name=value, -cname=value
      w.remove_prefix(2);
    else
      continue;
    size_t eq = w.find('=');
    if (eq == std::string_view::npos) continue;
    std::string name(w.substr(0, eq));
    std::replace(name.begin(), name.end(), '-', '_');
    settings.emplace_back(name, std::string(w.substr(eq + 1)));
  }
  return settings;
}

std::string set_config_select(const std::vector<std::pair<std::string, std::string>>& settings) {
  std::string sql;
  for (const auto& [name, value] : settings) {
    sql += sql.empty() ? "SELECT " : ", ";
    sql += "pg_catalog.set_config(" + quote_literal(name) + ", " + quote_literal(value) + ", false)";
  }
  return sql;
}

}  // namespace

std::string quote_literal(std::string_view value) {
  bool backslash = value.find('\\') != std::string_view::npos;
  std::string out = backslash ? "E'" : "'";
  for (char c : value) {
    if (c == '\'')
      out += "''";
    else if (c == '\\')
      out += "\\\\";
    else
      out.push_back(c);
  }
  out.push_back('\'');
  return out;
}

bool SessionState::is_protected(std::string_view name) {
  std::string n = lower(name);
  return n == "session_replication_role" || n.rfind("shardwire.", 0) == 0;
}

void SessionState::set_startup(const std::vector<std::pair<std::string, std::string>>& params) {
  // PostgreSQL applies the options switches first and the other startup parameters after them,
  // each as the plain value set_config takes (never re-quoted as SQL: "a,public" is a list).
  std::vector<std::pair<std::string, std::string>> settings;
  for (const auto& [name, value] : params) {
    if (lower(name) == "options") {
      auto split = split_options(value);
      settings.insert(settings.end(), split.begin(), split.end());
    }
  }
  for (const auto& [name, value] : params) {
    std::string n = lower(name);
    if (n != "user" && n != "database" && n != "replication" && n != "options")
      settings.emplace_back(name, value);
  }
  startup_values_.clear();
  for (const auto& [name, value] : settings) {
    if (is_identifier(name)) startup_values_.emplace_back(lower(name), value);
  }
  startup_ = set_config_select(startup_values_);
  rebuild_signature();
}

std::string SessionState::restore_startup(const std::vector<parser::StatementFacts>& statements) const {
  using parser::StatementKind;
  // Only a RESET (or RESET ALL, DISCARD ALL) undoes a startup value: most Queries have none.
  const auto resets = [](const parser::StatementFacts& statement) {
    return statement.kind == StatementKind::Reset || statement.kind == StatementKind::ResetAll ||
           statement.kind == StatementKind::DiscardAll;
  };
  if (startup_values_.empty() || std::none_of(statements.begin(), statements.end(), resets)) return "";
  std::vector<std::string> reset;  // startup settings reset and not set again afterwards
  auto forget = [&reset](const std::string& name) {
    reset.erase(std::remove(reset.begin(), reset.end(), name), reset.end());
  };
  auto is_startup = [this](const std::string& name) {
    return std::any_of(startup_values_.begin(), startup_values_.end(),
                       [&](const auto& setting) { return setting.first == name; });
  };
  for (const parser::StatementFacts& statement : statements) {
    std::string name = lower(statement.set_name);
    switch (statement.kind) {
      case StatementKind::ResetAll:
      case StatementKind::DiscardAll:
        reset.clear();
        for (const auto& setting : startup_values_) reset.push_back(setting.first);
        break;
      case StatementKind::Reset:
        if (is_startup(name)) reset.push_back(name);
        break;
      case StatementKind::Set:
      case StatementKind::SetLocal: forget(name); break;
      default: break;
    }
  }
  std::vector<std::pair<std::string, std::string>> restore;
  for (const auto& setting : startup_values_) {
    if (std::find(reset.begin(), reset.end(), setting.first) != reset.end()) restore.push_back(setting);
  }
  return set_config_select(restore);
}

namespace {

// A boolean literal as PostgreSQL reads one (boolin: a prefix of true/false/yes/no, on/off, 1/0).
std::optional<bool> literal_bool(const parser::Value& value) {
  if (value.kind == parser::ValueKind::Bool) return value.text == "true";
  if (value.kind != parser::ValueKind::String && value.kind != parser::ValueKind::Number) return std::nullopt;
  std::string v = lower(value.text);
  v.erase(0, v.find_first_not_of(" \t\n"));
  v.erase(v.find_last_not_of(" \t\n") + 1);
  auto prefix_of = [&v](std::string_view word, size_t min) {
    return v.size() >= min && v.size() <= word.size() && word.compare(0, v.size(), v) == 0;
  };
  if (prefix_of("true", 1) || prefix_of("yes", 1) || v == "on" || v == "1") return true;
  if (prefix_of("false", 1) || prefix_of("no", 1) || prefix_of("off", 2) || v == "0") return false;
  return std::nullopt;
}

// role and session_authorization survive RESET ALL (PostgreSQL's GUC_NO_RESET_ALL).
bool survives_reset_all(const std::string& name) { return name == "role" || name == "session_authorization"; }

}  // namespace

SetConfigEffect set_config_effect(const parser::SetConfigCall& call) {
  using parser::ValueKind;
  const bool literal_value = call.value.kind == ValueKind::String || call.value.kind == ValueKind::Null;
  std::optional<bool> local = literal_bool(call.is_local);
  if (local && *local) return SetConfigEffect::Local;
  if (call.name.kind != ValueKind::String || !is_identifier(call.name.text) || !literal_value || !local)
    return SetConfigEffect::Unknown;
  return SetConfigEffect::Session;
}

void SessionState::apply(std::vector<Setting>& settings, const parser::StatementFacts& statement) const {
  using parser::StatementKind;
  auto erase = [&settings](const std::string& name) {
    settings.erase(
        std::remove_if(settings.begin(), settings.end(), [&](const Setting& s) { return s.name == name; }),
        settings.end());
  };
  auto set = [&](const std::string& name, std::string sql) {
    // A DateStyle SET changes only the parts it names (SET datestyle TO ymd after ISO is
    // "ISO, YMD"): every one is replayed, in order. Any other SET replaces the earlier one.
    if (name != "datestyle") erase(name);
    // A new session authorization ends any SET ROLE (SetSessionUserId: SetRoleIsActive = false).
    if (name == "session_authorization") erase("role");
    settings.push_back({name, std::move(sql)});
  };
  switch (statement.kind) {
    case StatementKind::Set: set(statement.set_name, statement.text); break;
    case StatementKind::Reset:
      erase(statement.set_name);
      if (statement.set_name == "session_authorization") erase("role");
      break;
    case StatementKind::ResetAll:
      settings.erase(std::remove_if(settings.begin(), settings.end(),
                                    [](const Setting& s) { return !survives_reset_all(s.name); }),
                     settings.end());
      break;
    case StatementKind::DiscardAll: settings.clear(); break;
    default: break;
  }
  for (const parser::SetConfigCall& call : statement.set_config_calls) {
    if (set_config_effect(call) != SetConfigEffect::Session) continue;
    const std::string value =
        call.value.kind == parser::ValueKind::Null ? std::string("NULL") : quote_literal(call.value.text);
    set(lower(call.name.text),
        "SELECT pg_catalog.set_config(" + quote_literal(lower(call.name.text)) + ", " + value + ", false)");
  }
}

void SessionState::on_statement(const parser::StatementFacts& statement) {
  using parser::StatementKind;
  switch (statement.kind) {
    case StatementKind::Savepoint:
    case StatementKind::ReleaseSavepoint:
    case StatementKind::RollbackToSavepoint: on_savepoint(statement); return;
    case StatementKind::Set:
    case StatementKind::Reset:
    case StatementKind::ResetAll:
    case StatementKind::DiscardAll: break;
    default:
      if (statement.set_config_calls.empty()) return;
      break;
  }
  if (!pending_dirty_) pending_ = committed_;
  pending_dirty_ = true;
  apply(pending_, statement);
}

// SAVEPOINT keeps the settings as they are; ROLLBACK TO brings them back and keeps the savepoint
// (and drops the ones made after it); RELEASE drops it and those after it, keeping the settings.
// The innermost savepoint of a name is the one meant, as on the server.
void SessionState::on_savepoint(const parser::StatementFacts& statement) {
  using parser::StatementKind;
  if (statement.kind == StatementKind::Savepoint) {
    savepoints_.push_back({statement.savepoint_name, pending_dirty_ ? pending_ : committed_});
    return;
  }
  auto it = std::find_if(savepoints_.rbegin(), savepoints_.rend(),
                         [&](const Savepoint& s) { return s.name == statement.savepoint_name; });
  if (it == savepoints_.rend()) return;  // the server refused it: nothing changed
  auto at = std::prev(it.base());        // the savepoint named
  if (statement.kind == StatementKind::ReleaseSavepoint) {
    savepoints_.erase(at, savepoints_.end());
    return;
  }
  pending_ = at->settings;
  pending_dirty_ = true;
  savepoints_.erase(std::next(at), savepoints_.end());
}

bool changes_tracked_state(const parser::QueryFacts& facts) {
  using parser::StatementKind;
  for (const auto& statement : facts.statements) {
    switch (statement.kind) {
      case StatementKind::Set:
      case StatementKind::Reset:
      case StatementKind::ResetAll:
      case StatementKind::Discard:
      case StatementKind::DiscardAll:
      case StatementKind::Prepare:
      case StatementKind::Deallocate:
      case StatementKind::Savepoint:
      case StatementKind::ReleaseSavepoint:
      case StatementKind::RollbackToSavepoint: return true;
      default:
        if (!statement.set_config_calls.empty()) return true;
        break;
    }
  }
  return false;
}

bool changes_settings(const parser::QueryFacts& facts) {
  using parser::StatementKind;
  return std::any_of(facts.statements.begin(), facts.statements.end(), [](const parser::StatementFacts& s) {
    switch (s.kind) {
      case StatementKind::Set:
      case StatementKind::Reset:
      case StatementKind::ResetAll:
      case StatementKind::DiscardAll:
      case StatementKind::Savepoint:
      case StatementKind::ReleaseSavepoint:
      case StatementKind::RollbackToSavepoint: return true;
      default: return !s.set_config_calls.empty();
    }
  });
}

void SessionState::end_transaction(bool committed) {
  if (!pending_dirty_) {
    savepoints_.clear();
    return;
  }
  if (committed) {
    committed_.swap(pending_);
    rebuild_signature();
  }
  pending_.clear();
  pending_dirty_ = false;
  savepoints_.clear();
}

std::string SessionState::current(std::string_view name) const {
  const std::vector<Setting>& settings = pending_dirty_ ? pending_ : committed_;
  for (auto it = settings.rbegin(); it != settings.rend(); ++it) {
    if (it->name == name) return it->sql;
  }
  for (auto it = startup_values_.rbegin(); it != startup_values_.rend(); ++it) {
    if (it->first == name) return "=" + it->second;
  }
  return "";
}

void SessionState::rebuild_signature() {
  signature_.clear();
  if (!startup_.empty()) signature_ = startup_ + ";";
  for (const Setting& s : committed_) {
    signature_ += s.sql;
    signature_ += ";";
  }
}

}  // namespace sw::session
