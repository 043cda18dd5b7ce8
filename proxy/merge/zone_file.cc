#include "merge/zone_file.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>

namespace sw::merge {
namespace {

constexpr const char* kZoneDirectory = "/usr/share/zoneinfo/";
constexpr size_t kHeaderSize = 44;

int64_t big_endian(std::string_view bytes, size_t at, size_t width) {
  uint64_t v = 0;
  for (size_t i = 0; i < width; ++i) v = (v << 8) | static_cast<unsigned char>(bytes[at + i]);
  if (width == 4) return static_cast<int32_t>(static_cast<uint32_t>(v));
  return static_cast<int64_t>(v);
}

struct Counts {
  size_t isut = 0, isstd = 0, leap = 0, time = 0, type = 0, chars = 0;

  size_t block_size(size_t time_width) const {
    return time * time_width + time + type * 6 + chars + leap * (time_width + 4) + isstd + isut;
  }
};

bool read_header(std::string_view bytes, size_t at, Counts& counts) {
  if (bytes.size() < at + kHeaderSize || bytes.substr(at, 4) != "TZif") return false;
  size_t* fields[] = {&counts.isut, &counts.isstd, &counts.leap, &counts.time, &counts.type, &counts.chars};
  for (size_t i = 0; i < 6; ++i)
    *fields[i] = static_cast<size_t>(big_endian(bytes, at + 20 + 4 * i, 4) & 0xffffffff);
  return counts.type > 0 && bytes.size() >= at + kHeaderSize + counts.block_size(4);
}

// A POSIX TZ name: alphabetic ("EST") or quoted ("<+1030>").
bool read_rule_name(std::string_view& s, std::string& name) {
  size_t n = 0;
  if (!s.empty() && s[0] == '<') {
    n = s.find('>');
    if (n == std::string_view::npos) return false;
    name = std::string(s.substr(1, n - 1));
    s.remove_prefix(n + 1);
    return !name.empty();
  }
  while (n < s.size() && std::isalpha(static_cast<unsigned char>(s[n]))) ++n;
  name = std::string(s.substr(0, n));
  s.remove_prefix(n);
  return n >= 3;
}

// A POSIX TZ offset "[+-]hh[:mm[:ss]]", in seconds west of UTC.
bool read_rule_offset(std::string_view& s, int64_t& west) {
  int64_t sign = 1;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    sign = s[0] == '-' ? -1 : 1;
    s.remove_prefix(1);
  }
  int64_t parts[3] = {0, 0, 0};
  for (int i = 0; i < 3; ++i) {
    if (i > 0 && (s.empty() || s[0] != ':')) break;
    if (i > 0) s.remove_prefix(1);
    size_t n = 0;
    while (n < s.size() && n < 3 && std::isdigit(static_cast<unsigned char>(s[n]))) {
      parts[i] = parts[i] * 10 + (s[n] - '0');
      ++n;
    }
    if (n == 0) return false;
    s.remove_prefix(n);
  }
  west = sign * (parts[0] * 3600 + parts[1] * 60 + parts[2]);
  return true;
}

}  // namespace

std::optional<ZoneFile> ZoneFile::parse(std::string_view bytes) {
  Counts counts;
  if (!read_header(bytes, 0, counts)) return std::nullopt;
  size_t at = kHeaderSize;
  size_t width = 4;
  if (bytes[4] >= '2') {  // version 2+: a 64-bit block and a footer follow the 32-bit one
    at += counts.block_size(4);
    if (!read_header(bytes, at, counts)) return std::nullopt;
    at += kHeaderSize;
    width = 8;
    if (bytes.size() < at + counts.block_size(8)) return std::nullopt;
  }
  ZoneFile zone;
  for (size_t i = 0; i < counts.time; ++i)
    zone.transitions_.push_back(big_endian(bytes, at + i * width, width));
  at += counts.time * width;
  for (size_t i = 0; i < counts.time; ++i) {
    zone.type_after_.push_back(static_cast<uint8_t>(bytes[at + i]));
    if (zone.type_after_.back() >= counts.type) return std::nullopt;
  }
  at += counts.time;
  const std::string_view chars = bytes.substr(at + counts.type * 6, counts.chars);
  for (size_t i = 0; i < counts.type; ++i) {
    const size_t index = static_cast<unsigned char>(bytes[at + i * 6 + 5]);
    if (index >= chars.size()) return std::nullopt;
    const std::string_view rest = chars.substr(index);
    zone.types_.push_back(
        Type{big_endian(bytes, at + i * 6, 4), std::string(rest.substr(0, rest.find('\0')))});
  }
  at += counts.block_size(width) - counts.time * (width + 1);
  if (width == 8 && at < bytes.size() && bytes[at] == '\n') {  // footer: "\nEST5EDT,M3.2.0,M11.1.0\n"
    std::string_view rule = bytes.substr(at + 1);
    rule = rule.substr(0, rule.find('\n'));
    Type standard, daylight;
    int64_t west = 0;
    if (read_rule_name(rule, standard.abbreviation) && read_rule_offset(rule, west)) {
      standard.utoff = -west;
      zone.rule_types_.push_back(standard);
      if (read_rule_name(rule, daylight.abbreviation)) {
        daylight.utoff = standard.utoff + 3600;
        if (!rule.empty() && rule[0] != ',' && read_rule_offset(rule, west)) daylight.utoff = -west;
        zone.rule_types_.push_back(daylight);
      }
    }
  }
  return zone;
}

bool ZoneFile::in_effect(const Type& type, int64_t utc_seconds) const {
  auto after = std::upper_bound(transitions_.begin(), transitions_.end(), utc_seconds);
  if (after == transitions_.begin()) {
    const Type& first = types_[0];
    return first.utoff == type.utoff && first.abbreviation == type.abbreviation;
  }
  if (after == transitions_.end() && !rule_types_.empty()) {
    // The footer's rule decides between its standard and daylight types; the abbreviation
    // already names one of them.
    return std::any_of(rule_types_.begin(), rule_types_.end(), [&](const Type& t) {
      return t.utoff == type.utoff && t.abbreviation == type.abbreviation;
    });
  }
  const Type& current = types_[type_after_[static_cast<size_t>(after - transitions_.begin()) - 1]];
  return current.utoff == type.utoff && current.abbreviation == type.abbreviation;
}

std::optional<int64_t> ZoneFile::offset_of(std::string_view abbreviation, int64_t local_seconds) const {
  std::optional<int64_t> found;  // the one offset that could have printed this local time
  for (const auto* types : {&types_, &rule_types_}) {
    for (const Type& type : *types) {
      if (type.abbreviation != abbreviation || !in_effect(type, local_seconds - type.utoff)) continue;
      if (found && *found != type.utoff) return std::nullopt;  // two offsets: ambiguous
      found = type.utoff;
    }
  }
  return found;
}

const ZoneFile* system_zone(std::string_view name) {
  // Names as PostgreSQL accepts them ("America/New_York", "EST5EDT"); no way out of the directory.
  if (name.empty() || name[0] == '/' || name.find("..") != std::string_view::npos ||
      name.find('\0') != std::string_view::npos)
    return nullptr;
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<const ZoneFile>, std::less<>> zones;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto found = zones.find(name); found != zones.end()) return found->second.get();
  std::ifstream file(kZoneDirectory + std::string(name), std::ios::binary);
  if (!file) return nullptr;  // not cached: numeric or POSIX TimeZones are unbounded in number
  const std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  auto zone = ZoneFile::parse(bytes);
  if (!zone) return nullptr;
  return zones.emplace(std::string(name), std::make_unique<const ZoneFile>(std::move(*zone)))
      .first->second.get();
}

}  // namespace sw::merge
