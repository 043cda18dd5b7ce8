// The tz database reader against the system's real zone files (the ones PostgreSQL reads).
#include <ctime>

#include <doctest/doctest.h>
#include "merge/value.h"
#include "merge/zone_file.h"

using namespace sw::merge;

namespace {

// Seconds since 1970 of a local wall-clock time, as offset_of takes it.
int64_t local(int y, int mon, int d, int h, int min, int s = 0) {
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mon - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = min;
  tm.tm_sec = s;
  return static_cast<int64_t>(timegm(&tm));
}

const ZoneFile& zone(const char* name) {
  const ZoneFile* found = system_zone(name);
  REQUIRE_MESSAGE(found != nullptr, name);
  return *found;
}

}  // namespace

TEST_CASE("America/New_York: EST and EDT, the repeated hour told apart by the abbreviation") {
  const ZoneFile& ny = zone("America/New_York");
  CHECK(ny.offset_of("EST", local(2024, 1, 2, 10, 0)) == -5 * 3600);
  CHECK(ny.offset_of("EDT", local(2024, 7, 1, 8, 0)) == -4 * 3600);
  CHECK_FALSE(ny.offset_of("EDT", local(2024, 1, 2, 10, 0)));          // never printed in January
  CHECK_FALSE(ny.offset_of("CET", local(2024, 1, 2, 10, 0)));          // not this zone's
  CHECK(ny.offset_of("EST", local(2024, 11, 3, 1, 30)) == -5 * 3600);  // 01:30 happens twice
  CHECK(ny.offset_of("EDT", local(2024, 11, 3, 1, 30)) == -4 * 3600);
  CHECK_FALSE(ny.offset_of("EST", local(2024, 3, 10, 2, 30)));  // skipped hour: no such time
  CHECK_FALSE(ny.offset_of("EDT", local(2024, 3, 10, 2, 30)));
  CHECK(ny.offset_of("EDT", local(2050, 6, 30, 20, 0)) == -4 * 3600);  // the footer's rule
  CHECK(ny.offset_of("EST", local(2300, 1, 1, 0, 0)) == -5 * 3600);
  CHECK(ny.offset_of("LMT", local(1879, 12, 31, 19, 3, 58)) == -(4 * 3600 + 56 * 60 + 2));
  CHECK(system_zone("America/New_York") == &ny);  // read once, kept
}

TEST_CASE("Europe/Berlin: CET and CEST") {
  const ZoneFile& berlin = zone("Europe/Berlin");
  CHECK(berlin.offset_of("CET", local(2024, 1, 15, 12, 0)) == 3600);
  CHECK(berlin.offset_of("CEST", local(2024, 7, 15, 12, 0)) == 7200);
  CHECK(berlin.offset_of("CET", local(2024, 10, 27, 2, 30)) == 3600);
  CHECK(berlin.offset_of("CEST", local(2024, 10, 27, 2, 30)) == 7200);
  CHECK_FALSE(berlin.offset_of("CEST", local(2024, 1, 15, 12, 0)));
}

TEST_CASE("Australia/Lord_Howe: a half-hour daylight saving, numeric abbreviations") {
  const ZoneFile& lord_howe = zone("Australia/Lord_Howe");
  CHECK(lord_howe.offset_of("+1030", local(2024, 7, 1, 22, 30)) == 10 * 3600 + 1800);
  CHECK(lord_howe.offset_of("+11", local(2024, 1, 1, 23, 0)) == 11 * 3600);
  CHECK(lord_howe.offset_of("+11", local(2040, 1, 1, 23, 0)) == 11 * 3600);
  CHECK_FALSE(lord_howe.offset_of("+11", local(2024, 7, 1, 22, 30)));
}

TEST_CASE("Asia/Tokyo and UTC: no daylight saving") {
  CHECK(zone("Asia/Tokyo").offset_of("JST", local(2024, 7, 1, 12, 0)) == 9 * 3600);
  CHECK(zone("Asia/Tokyo").offset_of("JST", local(2100, 1, 1, 0, 0)) == 9 * 3600);
  CHECK_FALSE(zone("Asia/Tokyo").offset_of("JDT", local(2024, 7, 1, 12, 0)));
  CHECK(zone("UTC").offset_of("UTC", local(2024, 7, 1, 12, 0)) == 0);
  CHECK(zone("UTC").offset_of("UTC", local(1900, 1, 1, 0, 0)) == 0);
}

TEST_CASE("an abbreviation of two offsets at one local time is no answer") {
  // Moscow went from MSK +04 back to MSK +03 at 02:00 on 2014-10-26: 01:30 MSK happened twice.
  const ZoneFile& moscow = zone("Europe/Moscow");
  CHECK_FALSE(moscow.offset_of("MSK", local(2014, 10, 26, 1, 30)));
  CHECK(moscow.offset_of("MSK", local(2014, 10, 26, 2, 30)) == 3 * 3600);
  CHECK(moscow.offset_of("MSK", local(2013, 1, 1, 12, 0)) == 4 * 3600);
}

TEST_CASE("names that are no zone file, and bytes that are no TZif") {
  CHECK(system_zone("+05:00") == nullptr);
  CHECK(system_zone("EST5EDT,M3.2.0,M11.1.0") == nullptr);
  CHECK(system_zone("../../etc/passwd") == nullptr);
  CHECK(system_zone("/etc/passwd") == nullptr);
  CHECK(system_zone("No/Such_Zone") == nullptr);
  CHECK_FALSE(ZoneFile::parse(""));
  CHECK_FALSE(ZoneFile::parse("TZif2 but far too short"));
}

TEST_CASE("timestamptz with a zone abbreviation reads as the instant PostgreSQL 15 printed") {
  // Texts as PostgreSQL 15 prints them under TimeZone America/New_York or Europe/Berlin.
  const DateReading new_york{false, system_zone("America/New_York")};
  const DateReading berlin_dmy{true, system_zone("Europe/Berlin")};
  auto instant = [](const char* text, DateReading dates) {
    auto value = decode_text(oid::kTimestamptz, text, dates);
    REQUIRE_MESSAGE(value.is_ok(), text << ": " << value.status().message);
    return *value;
  };
  auto iso = [&](const char* text) { return instant(text, {}); };
  CHECK(instant("11/03/2024 01:30:00 EST", new_york).compare(iso("2024-11-03 01:30:00-05")) == 0);
  CHECK(instant("11/03/2024 01:30:00 EDT", new_york).compare(iso("2024-11-03 01:30:00-04")) == 0);
  CHECK(instant("11/03/2024 01:30:00 EDT", new_york).compare(instant("11/03/2024 01:30:00 EST", new_york)) <
        0);
  CHECK(instant("Sun Nov 03 01:30:00 2024 EST", new_york).compare(iso("2024-11-03 06:30:00+00")) == 0);
  CHECK(instant("07/01/2024 08:00:00.5 EDT", new_york).compare(iso("2024-07-01 12:00:00.5+00")) == 0);
  CHECK(instant("03/15/0044 07:03:58 LMT BC", new_york).compare(iso("0044-03-15 12:00:00+00 BC")) == 0);
  CHECK(instant("01.07.2024 14:00:00.5 CEST", berlin_dmy).compare(iso("2024-07-01 12:00:00.5+00")) == 0);
  CHECK(instant("Mon 01 Jan 13:00:00 2024 CET", berlin_dmy).compare(iso("2024-01-01 12:00:00+00")) == 0);
  CHECK(instant("27/10/2024 02:30:00 CEST", berlin_dmy)
            .compare(instant("27/10/2024 02:30:00 CET", berlin_dmy)) < 0);
  // No zone file, or no single offset: refused with 0A000 naming the abbreviation.
  auto unknown = decode_text(oid::kTimestamptz, "01/02/2024 10:00:00 EST", {});
  CHECK(unknown.status().sqlstate == "0A000");
  CHECK(unknown.status().message.find("\"EST\"") != std::string::npos);
  auto skipped = decode_text(oid::kTimestamptz, "03/10/2024 02:30:00 EST", new_york);
  CHECK(skipped.status().sqlstate == "0A000");
  const DateReading moscow{false, system_zone("Europe/Moscow")};
  CHECK(decode_text(oid::kTimestamptz, "10/26/2014 01:30:00 MSK", moscow).status().sqlstate == "0A000");
}
