#include "metrics/process_metrics.h"

#include <dirent.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string_view>
#include <vector>

namespace sw::metrics {
namespace {

bool read_file(const std::string& path, std::string* out) {
  std::ifstream in(path);
  if (!in) return false;
  std::ostringstream text;
  text << in.rdbuf();
  *out = text.str();
  return true;
}

// Parses a whole decimal token; false on anything else (e.g. "unlimited").
bool parse_u64(std::string_view token, unsigned long long* out) {
  if (token.empty() || token.size() > 20) return false;
  std::string copy(token);
  char* end = nullptr;
  errno = 0;
  unsigned long long value = std::strtoull(copy.c_str(), &end, 10);
  if (errno != 0 || end != copy.c_str() + copy.size() || copy[0] == '-') return false;
  *out = value;
  return true;
}

std::vector<std::string> split_words(std::string_view text) {
  std::vector<std::string> words;
  std::istringstream in{std::string(text)};
  std::string word;
  while (in >> word) words.push_back(word);
  return words;
}

// "btime <seconds>" of /proc/stat: when the system booted, in Unix seconds.
std::optional<unsigned long long> boot_time(const std::string& proc_root) {
  std::ifstream in(proc_root + "/stat");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("btime ", 0) != 0) continue;
    unsigned long long value = 0;
    if (parse_u64(std::string_view(line).substr(6), &value)) return value;
    return std::nullopt;
  }
  return std::nullopt;
}

void read_stat(const std::string& proc_root, const std::string& dir, ProcessReadings* out) {
  std::string text;
  if (!read_file(dir + "/stat", &text)) return;
  // The command name (field 2) is in parentheses and may itself contain spaces and ')'.
  size_t close = text.rfind(')');
  if (close == std::string::npos) return;
  std::vector<std::string> fields = split_words(std::string_view(text).substr(close + 1));
  // fields[0] is field 3 (state) of proc(5); field n is fields[n - 3].
  auto field = [&](size_t n, unsigned long long* value) {
    return n - 3 < fields.size() && parse_u64(fields[n - 3], value);
  };
  long ticks = sysconf(_SC_CLK_TCK);
  long page = sysconf(_SC_PAGESIZE);
  unsigned long long utime = 0, stime = 0, start = 0, vsize = 0, rss = 0;
  if (ticks > 0 && field(14, &utime) && field(15, &stime)) {
    out->cpu_seconds = static_cast<double>(utime + stime) / static_cast<double>(ticks);
  }
  if (field(23, &vsize)) out->virtual_bytes = static_cast<double>(vsize);
  if (page > 0 && field(24, &rss)) out->resident_bytes = static_cast<double>(rss) * page;
  if (ticks > 0 && field(22, &start)) {
    if (auto btime = boot_time(proc_root)) {
      out->start_time_seconds =
          static_cast<double>(*btime) + static_cast<double>(start) / static_cast<double>(ticks);
    }
  }
}

void read_fds(const std::string& dir, ProcessReadings* out) {
  DIR* fds = opendir((dir + "/fd").c_str());
  if (fds == nullptr) return;
  // Counts the descriptor opendir itself holds, as the Go and Python clients do.
  double count = 0;
  while (dirent* entry = readdir(fds)) {
    std::string_view name = entry->d_name;
    if (name != "." && name != "..") ++count;
  }
  closedir(fds);
  out->open_fds = count;
}

void read_limits(const std::string& dir, ProcessReadings* out) {
  std::ifstream in(dir + "/limits");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Max open files", 0) != 0) continue;
    std::vector<std::string> words = split_words(std::string_view(line).substr(14));
    unsigned long long soft = 0;
    if (!words.empty() && parse_u64(words[0], &soft)) out->max_fds = static_cast<double>(soft);
    return;
  }
}

}  // namespace

ProcessReadings read_process_metrics(const std::string& proc_root, const std::string& self) {
  ProcessReadings out;
  std::string dir = proc_root + "/" + self;
  read_stat(proc_root, dir, &out);
  read_fds(dir, &out);
  read_limits(dir, &out);
  return out;
}

ProcessReadings read_process_metrics() { return read_process_metrics("/proc", "self"); }

}  // namespace sw::metrics
