#include "common/log.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <ctime>

namespace sw::log {
namespace {

std::atomic<int> g_level{static_cast<int>(Level::Info)};

const char* level_name(Level level) {
  switch (level) {
    case Level::Debug: return "DEBUG";
    case Level::Info: return "INFO";
    case Level::Warn: return "WARN";
    case Level::Error: return "ERROR";
  }
  return "?";
}

}  // namespace

void set_level(Level level) { g_level.store(static_cast<int>(level), std::memory_order_relaxed); }

bool enabled(Level level) { return static_cast<int>(level) >= g_level.load(std::memory_order_relaxed); }

bool parse_level(const char* name, Level* out) {
  static constexpr struct {
    const char* name;
    Level level;
  } kLevels[] = {
      {"debug", Level::Debug}, {"info", Level::Info}, {"warn", Level::Warn}, {"error", Level::Error}};
  for (const auto& entry : kLevels) {
    if (std::strcmp(entry.name, name) == 0) {
      *out = entry.level;
      return true;
    }
  }
  return false;
}

void write(Level level, const char* fmt, ...) {
  char line[2048];
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  tm utc{};
  gmtime_r(&now.tv_sec, &utc);
  size_t used = strftime(line, sizeof line, "%Y-%m-%dT%H:%M:%S", &utc);
  used += static_cast<size_t>(
      snprintf(line + used, sizeof line - used, ".%03ldZ %-5s ", now.tv_nsec / 1000000, level_name(level)));
  va_list args;
  va_start(args, fmt);
  int n = vsnprintf(line + used, sizeof line - used - 1, fmt, args);
  va_end(args);
  if (n < 0) n = 0;
  used = std::min(sizeof line - 2, used + static_cast<size_t>(n));
  line[used++] = '\n';
  ssize_t ignored = ::write(STDERR_FILENO, line, used);
  (void)ignored;
}

}  // namespace sw::log
