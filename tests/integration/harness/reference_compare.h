// The merged-read suites check shardwire's answer against one plain PostgreSQL database holding
// the same rows (the reference): same column names, same command tag, same rows -- in order when
// the query's ORDER BY fixes it, as sorted multisets otherwise.
#pragma once

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/pg_client.h"
#include "harness/process.h"
#include "harness/sharded_fixture.h"

namespace it {

inline std::string hex_of(const std::string& bytes) {
  static const char* const kDigits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

// One row as "v1|v2|...", NULL as <null>; binary values as hex (so they compare byte for byte and
// print legibly).
inline std::string render_row(const PgResult& r, int row, ResultFormat format = ResultFormat::Text) {
  std::string line;
  for (int c = 0; c < r.cols(); ++c) {
    const std::string value = format == ResultFormat::Binary ? hex_of(r.value(row, c)) : r.value(row, c);
    line += (c ? "|" : "") + (r.is_null(row, c) ? "<null>" : value);
  }
  return line;
}

// "" when the results match; otherwise what differs first.
inline std::string compare_results(const PgResult& expected, const PgResult& actual, bool ordered,
                                   ResultFormat format = ResultFormat::Text) {
  if (!actual.ok()) return "shardwire: " + actual.describe();
  if (!expected.ok()) return "reference: " + expected.describe();
  if (expected.names() != actual.names()) return "column names differ";
  if (expected.command_tag() != actual.command_tag())
    return "command tag " + actual.command_tag() + ", expected " + expected.command_tag();
  std::vector<std::string> want, got;
  want.reserve(static_cast<size_t>(expected.rows()));
  got.reserve(static_cast<size_t>(actual.rows()));
  for (int i = 0; i < expected.rows(); ++i) want.push_back(render_row(expected, i, format));
  for (int i = 0; i < actual.rows(); ++i) got.push_back(render_row(actual, i, format));
  if (!ordered) {
    std::sort(want.begin(), want.end());
    std::sort(got.begin(), got.end());
  }
  if (want.size() != got.size())
    return std::to_string(got.size()) + " rows, expected " + std::to_string(want.size());
  for (size_t i = 0; i < want.size(); ++i)
    if (want[i] != got[i]) return "row " + std::to_string(i + 1) + ": " + got[i] + ", expected " + want[i];
  return "";
}

// A new plain database on the fixture's cluster, with `create_sql` run in it: the reference.
inline PgConn reference_database(ShardedFixture& f, const std::string& prefix,
                                 const std::string& create_sql) {
  const std::string name = unique_name(prefix);
  f.setup.cluster().create_database(name);
  ConnectResult connected = connect(f.setup.cluster().conninfo(name));
  if (!connected.ok) throw std::runtime_error("reference database " + name + ": " + connected.error);
  PgResult created = connected.conn.exec(create_sql);
  if (!created.ok()) throw std::runtime_error("reference database " + name + ": " + created.describe());
  return std::move(connected.conn);
}

}  // namespace it
