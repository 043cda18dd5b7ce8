// Reader of the routing golden files (header-only: tests/CMakeLists.txt builds *_test.cc)
// (tests/routing/*.route).
//
// Format, line by line ('#' starts a comment line; blank lines separate cases):
//   config, before the first case:
//     buckets 16                     bucket count (default 16)
//     shards s0 s1 s2                shard names; bucket i starts on shard i mod N
//     default s0                     default shard (default: the first)
//     table orders tenant_id bigint  a sharded table: name (maybe schema-qualified), key, type
//     reference plans                a reference table (maybe schema-qualified)
//     bucket 5 shard s2              move a bucket
//     bucket 5 migrating             mark a bucket MIGRATING
//   cases:
//     SQL, one or more lines
//     bind: 5 'a b' null x:00000005@23 ...   optional Bind values: text (bare or quoted,
//                                    '' for a quote), null, x:<hex> binary; @<oid> = Parse
//                                    type OID (default 0); "bind:" alone = no parameters
//     => <route summary>             expected router::route_summary() of route_query()
#pragma once

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "router/router.h"

namespace sw::router::testing {

struct GoldenCase {
  int line = 0;  // of the "=>" line
  std::string sql;
  bool has_bind = false;
  std::vector<std::string> values;  // raw bytes of each parameter
  BindValues bind;                  // views `values` (stable after loading)
  std::string expected;
};

struct GoldenFile {
  std::string path;
  std::vector<std::string> shards;
  uint32_t buckets = 16;
  std::string default_shard;
  std::vector<TableRule> tables;
  std::vector<ReferenceRule> references;
  std::vector<std::pair<uint32_t, std::string>> moves;  // bucket -> shard
  std::vector<uint32_t> migrating;
  std::vector<GoldenCase> cases;
  std::string error;  // a malformed file: what and where
};

// Loads one file; GoldenFile::error says what is wrong with it, if anything.
namespace {

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// "bind: ..." -> values; false with `error` on a bad token.
bool parse_bind(const std::string& text, GoldenCase& out, std::string& error) {
  size_t i = 0;
  while (true) {
    while (i < text.size() && text[i] == ' ') ++i;
    if (i >= text.size()) return true;
    BindParam param;
    std::string value;
    if (text[i] == '\'') {
      ++i;
      while (true) {
        if (i >= text.size()) {
          error = "unterminated quoted bind value";
          return false;
        }
        if (text[i] == '\'') {
          if (i + 1 < text.size() && text[i + 1] == '\'') {
            value.push_back('\'');
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        value.push_back(text[i++]);
      }
    } else {
      while (i < text.size() && text[i] != ' ' && text[i] != '@') value.push_back(text[i++]);
      if (value == "null") {
        param.null = true;
        value.clear();
      } else if (value.rfind("x:", 0) == 0) {
        std::string bytes;
        for (size_t k = 2; k + 1 < value.size() + 1 && k < value.size(); k += 2) {
          if (k + 1 >= value.size() || hex_digit(value[k]) < 0 || hex_digit(value[k + 1]) < 0) {
            error = "bad hex bind value " + value;
            return false;
          }
          bytes.push_back(static_cast<char>(hex_digit(value[k]) * 16 + hex_digit(value[k + 1])));
        }
        value = bytes;
        param.binary = true;
      }
    }
    uint32_t oid = 0;
    if (i < text.size() && text[i] == '@') {
      ++i;
      std::string digits;
      while (i < text.size() && text[i] != ' ') digits.push_back(text[i++]);
      oid = static_cast<uint32_t>(std::stoul(digits));
    }
    out.values.push_back(value);
    out.bind.params.push_back(param);
    out.bind.types.push_back(oid);
  }
}

}  // namespace

inline GoldenFile load_golden_file(const std::string& path) {
  GoldenFile file;
  file.path = path;
  std::ifstream in(path);
  if (!in) {
    file.error = path + ": cannot read";
    return file;
  }
  GoldenCase current;
  bool in_cases = false;
  int number = 0;
  auto fail = [&](const std::string& what) {
    file.error = path + ":" + std::to_string(number) + ": " + what;
    return file;
  };
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    const std::vector<std::string> w = words(line);
    if (!in_cases && !w.empty()) {
      if (w[0] == "buckets" && w.size() == 2) {
        file.buckets = static_cast<uint32_t>(std::stoul(w[1]));
        continue;
      }
      if (w[0] == "shards" && w.size() >= 2) {
        file.shards.assign(w.begin() + 1, w.end());
        continue;
      }
      if (w[0] == "default" && w.size() == 2) {
        file.default_shard = w[1];
        continue;
      }
      if (w[0] == "table" && w.size() == 4) {
        config::Sharding one;
        one.tables.push_back({w[1], w[2], w[3], ""});
        auto rules = RoutingRules::from_config(one);
        if (!rules.is_ok()) return fail(rules.status().message);
        file.tables.push_back(rules.value().tables().front());
        continue;
      }
      if (w[0] == "reference" && w.size() == 2) {
        config::Sharding one;
        one.reference_tables.push_back(w[1]);
        auto rules = RoutingRules::from_config(one);
        if (!rules.is_ok()) return fail(rules.status().message);
        file.references.push_back(rules.value().references().front());
        continue;
      }
      if (w[0] == "bucket" && w.size() == 4 && w[2] == "shard") {
        file.moves.emplace_back(static_cast<uint32_t>(std::stoul(w[1])), w[3]);
        continue;
      }
      if (w[0] == "bucket" && w.size() == 3 && w[2] == "migrating") {
        file.migrating.push_back(static_cast<uint32_t>(std::stoul(w[1])));
        continue;
      }
    }
    in_cases = true;
    if (line.rfind("bind:", 0) == 0) {
      current.has_bind = true;
      std::string error;
      if (!parse_bind(line.substr(5), current, error)) return fail(error);
    } else if (line.rfind("=>", 0) == 0) {
      if (current.sql.empty()) return fail("expected route without SQL");
      current.line = number;
      current.expected = line.substr(line.size() > 2 && line[2] == ' ' ? 3 : 2);
      file.cases.push_back(std::move(current));
      current = GoldenCase{};
    } else {
      if (current.has_bind) return fail("SQL after bind:");
      current.sql += (current.sql.empty() ? "" : "\n") + line;
    }
  }
  if (!current.sql.empty()) return fail("SQL without an expected route at the end of the file");
  // Values are final: point the BindParams at them.
  for (GoldenCase& c : file.cases) {
    for (size_t i = 0; i < c.values.size(); ++i) c.bind.params[i].bytes = c.values[i];
  }
  if (file.shards.empty()) return fail("no shards line");
  if (file.default_shard.empty()) file.default_shard = file.shards.front();
  return file;
}

}  // namespace sw::router::testing
