// Result values as PostgreSQL orders them. A text-format value of a known type is decoded once
// into a Value (an integer, a float, an exact decimal or bytes), which compares with
// PostgreSQL's semantics for that type and gives a canonical key (equal values, equal keys) for
// GROUP BY and DISTINCT. Pure, never throws.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "common/status.h"
#include "merge/decimal.h"
#include "merge/zone_file.h"

namespace sw::merge {

namespace oid {
constexpr uint32_t kBool = 16, kBytea = 17, kName = 19, kInt8 = 20, kInt2 = 21, kInt4 = 23, kText = 25,
                   kOid = 26, kFloat4 = 700, kFloat8 = 701, kBpchar = 1042, kVarchar = 1043, kDate = 1082,
                   kTime = 1083, kTimestamp = 1114, kTimestamptz = 1184, kInterval = 1186, kNumeric = 1700,
                   kUuid = 2950;
}

// Whether shardwire can order and compare values of this type.
bool is_comparable_type(uint32_t type_oid);
const char* type_name(uint32_t type_oid);  // "int4", ... or "type <oid>"

struct Value {
  // Integers (and bool, date, time, timestamps, interval spans in microseconds); double; exact
  // decimal; bytes (text under C collation, bpchar without trailing blanks, uuid, bytea hex).
  std::variant<Int128, double, Decimal, std::string> v;

  int compare(const Value& other) const;  // same type only
  std::string canonical() const;
};

// How the session prints dates and times: its DateStyle's field order (`day_first`: DMY) and the
// tz database zone of its TimeZone (nullptr: not a zone file), which gives the offset a
// timestamptz's abbreviation stands for outside DateStyle ISO.
struct DateReading {
  bool day_first = false;
  const ZoneFile* zone = nullptr;
};

// Decodes one text-format value of `type_oid`. 22P02 when the text is not what the type
// prints, 0A000 when its IntervalStyle/bytea_output is not the default one the decoder reads
// (postgres, hex). Dates and timestamps are read in every DateStyle; a timestamptz outside ISO
// with a numeric zone, UTC/GMT, or an abbreviation that names one offset at that local time in
// `dates.zone` (0A000 otherwise: no zone file, or an abbreviation of more than one offset).
Result<Value> decode_text(uint32_t type_oid, std::string_view text, DateReading dates = {});

// Whether a DateStyle setting ("SQL, DMY", "German", "Postgres, MDY") prints the day first.
bool day_first(std::string_view date_style);

// An interval's fields as PostgreSQL stores them, from its IntervalStyle postgres text (22P02
// when malformed, 0A000 for another style).
struct IntervalParts {
  int64_t months = 0;
  int64_t days = 0;
  int64_t microseconds = 0;
};
Result<IntervalParts> decode_interval_parts(std::string_view text);

// Whether text under this database collation (datcollate, or the ICU locale) orders by bytes,
// as the merge compares it: C, POSIX, C.UTF-8 (code point order is byte order in UTF-8).
bool byte_order_collation(std::string_view collation);
// Whether values of this type compare under a collation (text, varchar, bpchar, name).
bool is_collatable_type(uint32_t type_oid);

// float8out / float4out (extra_float_digits 1): shortest text that reads back exactly.
std::string format_float8(double value);
std::string format_float4(float value);

}  // namespace sw::merge
