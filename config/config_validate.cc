// validate: rules that relate fields to each other, and defaults derived from other fields.
// Each error points at the line recorded when the offending key was read (0 when the key is
// absent and there is nothing to point at).
#include <filesystem>
#include <map>
#include <string>
#include <system_error>

#include "config/loader.h"

namespace sw::config::detail {
namespace {

const std::string kScramPrefix = "SCRAM-SHA-256$";

// "SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>", as pg_authid stores it.
bool looks_like_scram_verifier(const std::string& password) {
  if (password.rfind(kScramPrefix, 0) != 0) return false;
  std::string rest = password.substr(kScramPrefix.size());
  size_t colon1 = rest.find(':');
  size_t dollar = rest.find('$');
  size_t colon2 = rest.rfind(':');
  return colon1 != std::string::npos && dollar != std::string::npos && colon1 < dollar && colon2 > dollar &&
         colon1 > 0 && colon2 + 1 < rest.size();
}

void validate_users(const Config& cfg, const LoadContext& ctx) {
  std::map<std::string, size_t> seen;
  for (size_t i = 0; i < cfg.auth.users.size(); ++i) {
    const User& user = cfg.auth.users[i];
    const std::string path = "auth.users[" + std::to_string(i) + "]";
    auto [it, inserted] = seen.emplace(user.name, i);
    if (!inserted) {
      ctx.fail(ctx.line_of(path + ".name"), path + ".name",
               "duplicate user " + quote_value(user.name) + " (first at line " +
                   std::to_string(ctx.line_of("auth.users[" + std::to_string(it->second) + "].name")) + ")");
    }
    const bool has_password = !user.password.empty();
    const int password_line = has_password ? ctx.line_of(path + ".password") : ctx.line_of(path);
    if (!has_password && cfg.auth.method != AuthMethod::Trust) {
      ctx.fail(password_line, path + ".password", "is required unless auth.method is trust");
    }
    if (user.password.rfind(kScramPrefix, 0) == 0) {
      if (cfg.auth.method == AuthMethod::Md5) {
        ctx.fail(password_line, path + ".password",
                 "a SCRAM-SHA-256 verifier cannot be used with auth.method md5");
      }
      if (!looks_like_scram_verifier(user.password)) {
        ctx.fail(password_line, path + ".password",
                 "malformed SCRAM-SHA-256 verifier (expected "
                 "SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>)");
      }
    }
  }
  for (size_t i = 0; i < cfg.admin.users.size(); ++i) {
    const std::string path = "admin.users[" + std::to_string(i) + "]";
    if (cfg.auth.find(cfg.admin.users[i]) == nullptr) {
      ctx.fail(ctx.line_of(path), path, quote_value(cfg.admin.users[i]) + " is not one of auth.users");
    }
  }
}

// "app.plans" and "plans" name the same table when one of them has no schema (the router
// matches an unqualified configured name in any schema).
bool same_table_name(const std::string& a, const std::string& b) {
  const size_t da = a.rfind('.');
  const size_t db = b.rfind('.');
  const std::string name_a = da == std::string::npos ? a : a.substr(da + 1);
  const std::string name_b = db == std::string::npos ? b : b.substr(db + 1);
  if (name_a != name_b) return false;
  if (da == std::string::npos || db == std::string::npos) return true;
  return a.substr(0, da) == b.substr(0, db);
}

// A reference table is neither sharded nor listed twice.
void validate_reference_tables(const Config& cfg, const LoadContext& ctx) {
  const std::vector<std::string>& references = cfg.sharding.reference_tables;
  for (size_t i = 0; i < references.size(); ++i) {
    const std::string key = "sharding.reference_tables[" + std::to_string(i) + "]";
    if (references[i].empty()) ctx.fail(ctx.line_of(key), key, "must be a table name, got an empty one");
    for (size_t j = 0; j < i; ++j) {
      if (!same_table_name(references[i], references[j])) continue;
      ctx.fail(ctx.line_of(key), key,
               "duplicate reference table " + quote_value(references[i]) + " (first at line " +
                   std::to_string(ctx.line_of("sharding.reference_tables[" + std::to_string(j) + "]")) + ")");
    }
    for (size_t t = 0; t < cfg.sharding.tables.size(); ++t) {
      if (!same_table_name(references[i], cfg.sharding.tables[t].name)) continue;
      ctx.fail(ctx.line_of(key), key,
               "table " + quote_value(references[i]) +
                   " is both a reference table and sharded (sharding.tables[" + std::to_string(t) +
                   "] at line " +
                   std::to_string(ctx.line_of("sharding.tables[" + std::to_string(t) + "].name")) +
                   "); a table is either sharded or copied to every shard, not both");
    }
  }
}

void validate_shards(Config& cfg, const LoadContext& ctx) {
  if (cfg.shards.empty()) {
    ctx.fail(ctx.line_of("shards"), "shards", "at least one shard is required");
  }
  std::map<std::string, size_t> seen;
  for (size_t i = 0; i < cfg.shards.size(); ++i) {
    auto [it, inserted] = seen.emplace(cfg.shards[i].name, i);
    if (!inserted) {
      const std::string key = "shards[" + std::to_string(i) + "].name";
      ctx.fail(ctx.line_of(key), key,
               "duplicate shard name " + quote_value(cfg.shards[i].name) + " (first at line " +
                   std::to_string(ctx.line_of("shards[" + std::to_string(it->second) + "].name")) + ")");
    }
  }
  if (cfg.sharding.default_shard.empty()) {
    cfg.sharding.default_shard = cfg.shards.front().name;
  } else if (cfg.find_shard(cfg.sharding.default_shard) == nullptr) {
    std::string names;
    for (const Shard& shard : cfg.shards) names += (names.empty() ? "" : ", ") + shard.name;
    ctx.fail(ctx.line_of("sharding.default_shard"), "sharding.default_shard",
             "no shard named " + quote_value(cfg.sharding.default_shard) + " (shards: " + names + ")");
  }
  std::map<std::string, size_t> tables;
  for (size_t i = 0; i < cfg.sharding.tables.size(); ++i) {
    auto [it, inserted] = tables.emplace(cfg.sharding.tables[i].name, i);
    if (!inserted) {
      const std::string key = "sharding.tables[" + std::to_string(i) + "].name";
      ctx.fail(ctx.line_of(key), key,
               "duplicate sharded table " + quote_value(cfg.sharding.tables[i].name) + " (first at line " +
                   std::to_string(ctx.line_of("sharding.tables[" + std::to_string(it->second) + "].name")) +
                   ")");
    }
  }
}

// Resolves `file` against `base_dir` and checks that it exists and is a regular file.
void check_file(std::string& file, const std::string& key, const std::string& base_dir,
                const LoadContext& ctx) {
  std::filesystem::path path(file);
  if (path.is_relative() && !base_dir.empty()) path = std::filesystem::path(base_dir) / path;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    ctx.fail(ctx.line_of(key), key, "file not found: " + quote_value(path.string()));
  }
  file = path.string();
}

void validate_tls(Config& cfg, const LoadContext& ctx, const std::string& base_dir) {
  Tls& tls = cfg.listen.tls;
  if (tls.cert_file.empty() && tls.key_file.empty()) return;
  if (tls.cert_file.empty() || tls.key_file.empty()) {
    const std::string given = tls.cert_file.empty() ? "listen.tls.key_file" : "listen.tls.cert_file";
    ctx.fail(ctx.line_of(given), "listen.tls", "needs both cert_file and key_file, or neither");
  }
  check_file(tls.cert_file, "listen.tls.cert_file", base_dir, ctx);
  check_file(tls.key_file, "listen.tls.key_file", base_dir, ctx);
}

}  // namespace

void validate(Config& cfg, const LoadContext& ctx, const std::string& base_dir) {
  validate_users(cfg, ctx);
  validate_shards(cfg, ctx);
  validate_reference_tables(cfg, ctx);
  validate_tls(cfg, ctx, base_dir);
  const bool database_set = !cfg.database.empty();
  if (!database_set) {
    const std::string& dbname = cfg.shards.front().conn.dbname;
    cfg.database = dbname.empty() ? "postgres" : dbname;
  }
  if (cfg.admin.database == cfg.database) {
    if (ctx.line_of("admin.database") != 0) {
      ctx.fail(ctx.line_of("admin.database"), "admin.database",
               "must differ from the client database " + quote_value(cfg.database));
    }
    ctx.fail(ctx.line_of("database"), "database",
             std::string(database_set ? "is" : "defaults to the first shard's dbname, which is") +
                 " the admin console database " + quote_value(cfg.admin.database) +
                 "; set database or admin.database");
  }
}

}  // namespace sw::config::detail
