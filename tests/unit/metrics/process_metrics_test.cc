#include "metrics/process_metrics.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "metrics_test_util.h"

using sw::metrics::ProcessReadings;
using sw::metrics::read_process_metrics;

namespace {

double now_seconds() {
  using namespace std::chrono;
  return duration_cast<duration<double>>(system_clock::now().time_since_epoch()).count();
}

}  // namespace

TEST_CASE("process metrics of this process are plausible") {
  ProcessReadings p = read_process_metrics();
  REQUIRE(p.resident_bytes.has_value());
  REQUIRE(p.virtual_bytes.has_value());
  REQUIRE(p.open_fds.has_value());
  REQUIRE(p.max_fds.has_value());
  REQUIRE(p.cpu_seconds.has_value());
  REQUIRE(p.start_time_seconds.has_value());
  CHECK(*p.resident_bytes > 0);
  CHECK(*p.virtual_bytes >= *p.resident_bytes);
  CHECK(*p.open_fds >= 3);
  CHECK(*p.max_fds >= *p.open_fds);
  CHECK(*p.cpu_seconds >= 0);
  double now = now_seconds();
  CHECK(*p.start_time_seconds <= now + 1);
  CHECK(*p.start_time_seconds > now - 3600);
}

TEST_CASE("process metrics appear in the exposition") {
  std::string text = sw::metrics_test::render(sw::metrics::Readings{});
  CHECK(text.find("\nprocess_resident_memory_bytes ") != std::string::npos);
  CHECK(text.find("\nprocess_open_fds ") != std::string::npos);
  CHECK(text.find("\nprocess_start_time_seconds ") != std::string::npos);
  CHECK(sw::metrics_test::has_line(text, "# TYPE process_cpu_seconds_total counter"));
}

TEST_CASE("a fake /proc: fields after a command name with spaces and parentheses") {
  namespace fs = std::filesystem;
  fs::path root = fs::temp_directory_path() / ("sw_metrics_proc_" + std::to_string(getpid()));
  fs::create_directories(root / "self" / "fd");
  {
    std::ofstream(root / "stat") << "cpu  1 2 3\nbtime 1700000000\nprocesses 5\n";
    // Fields 3..24: state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
    // utime stime cutime cstime priority nice threads itrealvalue starttime vsize rss.
    std::ofstream(root / "self" / "stat")
        << "123 (a (b) c) S 1 1 1 0 -1 0 0 0 0 0 250 150 0 0 20 0 1 0 " << 12345 * sysconf(_SC_CLK_TCK) / 100
        << " 104857600 2560 18446744073709551615\n";
    std::ofstream(root / "self" / "limits")
        << "Limit                     Soft Limit           Hard Limit           Units\n"
        << "Max open files            4096                 524288               files\n";
    std::ofstream(root / "self" / "fd" / "0");
    std::ofstream(root / "self" / "fd" / "1");
  }
  ProcessReadings p = read_process_metrics(root.string(), "self");
  long ticks = sysconf(_SC_CLK_TCK);
  REQUIRE(p.cpu_seconds.has_value());
  CHECK(*p.cpu_seconds == doctest::Approx(400.0 / ticks));
  CHECK(*p.virtual_bytes == 104857600.0);
  CHECK(*p.resident_bytes == 2560.0 * sysconf(_SC_PAGESIZE));
  CHECK(*p.max_fds == 4096.0);
  CHECK(*p.open_fds == 2.0);
  CHECK(*p.start_time_seconds == doctest::Approx(1700000000.0 + 123.45));
  fs::remove_all(root);

  ProcessReadings missing = read_process_metrics("/nonexistent-proc", "self");
  CHECK_FALSE(missing.cpu_seconds.has_value());
  CHECK_FALSE(missing.open_fds.has_value());
}
