// The shards of one read must answer with the same result columns (docs/architecture.md §5.6,
// "Same columns on every shard"): a runner that relays or merges several shards' rows under one
// RowDescription keeps the first one it takes and compares every other shard's with it, once per
// statement and shard (never per row). Compared: the column count and, per column, its name (a
// client maps columns by name, and a column moved on one shard keeps its type), its type OID
// and its format code. Not compared: the table OID and attribute number (they differ between
// shard databases), the type size (the type's), the type modifier (a value's text and binary
// forms do not depend on it, and PostgreSQL's own UNION ALL of varchar(10) and varchar(20) answers
// rows of both; a widening ALTER run shard by shard must not fail reads). Pure: no I/O.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "wire/row_description.h"

namespace sw::session {

// 42804 (datatype_mismatch), as PostgreSQL answers a UNION whose branches cannot be matched, which
// a read across shards is: the fix is the shards' schema, not the statement or shardwire (so not
// XX000), and nothing is unsupported (so not 0A000): the same read works once the shards agree.
inline constexpr std::string_view kShapeMismatchState = "42804";

// The first difference between `shard`'s columns and `reference_shard`'s, as an error a person
// can act on ("shard s1 returned 2 columns where shard s0 returned 1"); ok when the shapes match.
Status compare_result_columns(std::string_view reference_shard, const std::vector<wire::RowField>& reference,
                              std::string_view shard, const std::vector<wire::RowField>& fields);

// The same error for two copies of one COPY ... TO STDOUT whose column counts differ.
Status copy_columns_mismatch(std::string_view reference_shard, size_t reference_columns,
                             std::string_view shard, size_t columns);

// One statement's result shape over its legs: check() keeps the first RowDescription body it is
// given and compares each later one with it. The error names the lower leg as the reference, so
// it does not depend on which shard answered first.
class ResultShape {
 public:
  Status check(size_t leg, std::string_view shard, std::string_view body);
  bool known() const { return known_; }
  void reset() { known_ = false; }

 private:
  bool known_ = false;
  size_t leg_ = 0;
  std::string shard_;
  std::string body_;  // the reference's body: fields_ point into it
  std::vector<wire::RowField> fields_;
};

}  // namespace sw::session
