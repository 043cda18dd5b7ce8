// A time zone of the system tz database (a TZif file, RFC 8536), as PostgreSQL built with
// --with-system-tzdata reads it: a timestamptz printed in DateStyle SQL, German or Postgres names
// its offset only by the zone's abbreviation ("EST", "CEST"); the zone's file tells which offset
// that abbreviation had at that local time (docs/architecture.md §5.6, merged reads).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sw::merge {

class ZoneFile {
 public:
  // The zone in TZif bytes (versions 1 to 4); nullopt when they are not a TZif file.
  static std::optional<ZoneFile> parse(std::string_view bytes);

  // Seconds east of UTC that `abbreviation` stands for at the local wall-clock second
  // `local_seconds` (seconds since 1970-01-01 00:00 of the local clock). nullopt when no local
  // time type with that abbreviation was in effect then, or when types of different offsets could
  // have printed it (the caller refuses rather than guess).
  std::optional<int64_t> offset_of(std::string_view abbreviation, int64_t local_seconds) const;

 private:
  struct Type {
    int64_t utoff = 0;  // seconds east of UTC
    std::string abbreviation;
  };
  bool in_effect(const Type& type, int64_t utc_seconds) const;

  std::vector<int64_t> transitions_;  // UTC seconds, ascending
  std::vector<uint8_t> type_after_;   // type index in effect from each transition on
  std::vector<Type> types_;           // types_[0]: in effect before the first transition
  std::vector<Type> rule_types_;      // the footer's standard and daylight types, after the last
                                      // transition (empty: the last type stays)
};

// The zone PostgreSQL's TimeZone setting `name` names in /usr/share/zoneinfo, read once per name
// and kept for the life of the process (thread-safe). nullptr for a name that is no zone file (a
// numeric offset, a POSIX rule, a path leaving the directory) or an unreadable file. Does file
// I/O on a name's first call.
const ZoneFile* system_zone(std::string_view name);

}  // namespace sw::merge
