// One line per event: "<time> <LEVEL> <component> <message>". Thread-safe; each line is written
// with a single write(2). Never pass secrets or bound parameter values to these functions.
#pragma once

#include <cstdarg>

namespace sw::log {

enum class Level { Debug = 0, Info = 1, Warn = 2, Error = 3 };

void set_level(Level level);
bool enabled(Level level);
// Parses "debug" | "info" | "warn" | "error"; returns false if the name is unknown.
bool parse_level(const char* name, Level* out);

void write(Level level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

}  // namespace sw::log

#define SW_LOG(level, ...)                                               \
  do {                                                                   \
    if (::sw::log::enabled(level)) ::sw::log::write(level, __VA_ARGS__); \
  } while (0)
#define LOG_DEBUG(...) SW_LOG(::sw::log::Level::Debug, __VA_ARGS__)
#define LOG_INFO(...) SW_LOG(::sw::log::Level::Info, __VA_ARGS__)
#define LOG_WARN(...) SW_LOG(::sw::log::Level::Warn, __VA_ARGS__)
#define LOG_ERROR(...) SW_LOG(::sw::log::Level::Error, __VA_ARGS__)
