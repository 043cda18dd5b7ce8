// pg_query_parse on a stack big enough for the tree (internal to sw_parser).
//
// Why: libpg_query writes its parse tree out recursively, a chain of C frames per tree level,
// and left-associative chains ("1+1+1...", "x::t::t...", UNION, JOIN) nest without the bison
// stack limit that bounds parenthesized nesting. A 300 KB "SELECT 1+1+...+1" needs ~10 MB of
// stack and would crash the proxy on an ordinary 8 MB thread stack. Measured worst case
// (libpg_query 15-4.0): ~64 bytes of stack per byte of SQL ("+1" is two bytes and one tree
// level of ~128 bytes of frames). So a statement of N bytes is parsed on the calling thread when
// it is small (kInlineParseBytes), else on a helper thread whose stack is sized from N, and
// refused (SQLSTATE 54000) past kMaxAnalyzeBytes.
#pragma once

#include <pg_query.h>

#include <cstddef>
#include <string>

#include "common/status.h"

namespace sw::parser::detail {

constexpr size_t kStackBytesPerSqlByte = 128;   // measured worst case 64, doubled
constexpr size_t kInlineParseBytes = 8 * 1024;  // at most ~1 MiB of the caller's stack
constexpr size_t kHelperStackBase = 1 << 20;
constexpr size_t kMaxParseStack = size_t{1} << 30;
constexpr size_t kMaxAnalyzeBytes = (kMaxParseStack - kHelperStackBase) / kStackBytesPerSqlByte;

// Runs pg_query_parse(sql) where the stack suffices. On success `out` owns the result (free it
// with pg_query_free_parse_result; it is plain malloc'ed memory, valid on any thread). Returns
// false with `status` set when the statement is too large or no helper thread could be started.
bool guarded_parse(const std::string& sql, PgQueryParseResult& out, Status& status);

}  // namespace sw::parser::detail
