#include "catalog/two_phase.h"

#include <cstdlib>

#include "catalog/pq.h"

namespace sw::catalog {
namespace {

constexpr const char* kInsertDecisionSql =
    "INSERT INTO shardwire.transactions (gid, shards, decision) VALUES ($1, $2::text[], $3) "
    "ON CONFLICT (gid) DO NOTHING";
constexpr const char* kReadDecisionSql = "SELECT decision FROM shardwire.transactions WHERE gid = $1";
constexpr const char* kLoadDecisionsSql =
    "SELECT gid, decision, shards::text, decided_at::text, extract(epoch FROM now() - decided_at)::float8 "
    "FROM shardwire.transactions ORDER BY gid";
constexpr const char* kForgetDecisionSql = "DELETE FROM shardwire.transactions WHERE gid = $1";

// Inserts `decision` unless one exists; true when this call inserted it.
Result<bool> insert_decision(PGconn* catalog, std::string_view gid, const std::vector<std::string>& shards,
                             twopc::TwoPhaseDecision decision) {
  auto res =
      query(catalog, kInsertDecisionSql,
            {std::string(gid), text_array_literal(shards), std::string(twopc::decision_name(decision))});
  if (!res) {
    const Status& s = res.status();
    return Status{s.fault, s.sqlstate,
                  "recording the " + std::string(twopc::decision_name(decision)) +
                      " decision of two-phase transaction " + std::string(gid) +
                      " in the catalog: " + s.message};
  }
  return std::string_view(PQcmdTuples(res->get())) == "1";
}

}  // namespace

Result<bool> record_commit_decision(PGconn* catalog, std::string_view gid,
                                    const std::vector<std::string>& shards) {
  return insert_decision(catalog, gid, shards, twopc::TwoPhaseDecision::Commit);
}

Result<twopc::TwoPhaseDecision> record_abort_decision(PGconn* catalog, std::string_view gid,
                                                      const std::vector<std::string>& shards) {
  auto inserted = insert_decision(catalog, gid, shards, twopc::TwoPhaseDecision::Abort);
  if (!inserted) return inserted.status();
  if (*inserted) return twopc::TwoPhaseDecision::Abort;
  // Another statement decided first (the coordinator's commit, or another recovery round): its
  // row is committed, and a new statement's snapshot sees it.
  auto res = query(catalog, kReadDecisionSql, {std::string(gid)});
  if (!res) return res.status();
  if (PQntuples(res->get()) != 1)
    return Status::server("40001",
                          "two-phase transaction " + std::string(gid) +
                              ": its decision row vanished between insert and read; retried next round");
  return text_value(res->get(), 0, 0) == "commit" ? twopc::TwoPhaseDecision::Commit
                                                  : twopc::TwoPhaseDecision::Abort;
}

Result<twopc::Decisions> load_decisions(PGconn* catalog) {
  auto res = query(catalog, kLoadDecisionsSql);
  if (!res) return res.status();
  twopc::Decisions decisions;
  const PGresult* r = res->get();
  for (int row = 0; row < PQntuples(r); ++row) {
    twopc::DecisionRow d;
    d.decision =
        text_value(r, row, 1) == "commit" ? twopc::TwoPhaseDecision::Commit : twopc::TwoPhaseDecision::Abort;
    d.shards = parse_text_array(text_value(r, row, 2));
    d.decided_at = text_value(r, row, 3);
    d.age_s = std::strtod(text_value(r, row, 4).c_str(), nullptr);
    decisions.emplace(text_value(r, row, 0), std::move(d));
  }
  return decisions;
}

Status forget_decision(PGconn* catalog, std::string_view gid) {
  auto res = query(catalog, kForgetDecisionSql, {std::string(gid)});
  return res ? Status::ok() : res.status();
}

std::vector<std::string> parse_text_array(std::string_view text) {
  std::vector<std::string> out;
  if (text.size() < 2 || text.front() != '{' || text.back() != '}') return out;
  text = text.substr(1, text.size() - 2);
  size_t i = 0;
  while (i < text.size()) {
    std::string item;
    if (text[i] == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\' && i + 1 < text.size()) ++i;
        item += text[i];
      }
      ++i;  // the closing quote
    } else {
      size_t end = text.find(',', i);
      if (end == std::string_view::npos) end = text.size();
      item = std::string(text.substr(i, end - i));
      if (item == "NULL") item.clear();
      i = end;
    }
    out.push_back(std::move(item));
    ++i;  // the comma
  }
  return out;
}

}  // namespace sw::catalog
