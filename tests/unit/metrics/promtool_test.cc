// `promtool check metrics` (Debian package prometheus) lints the exposition: naming, units,
// _total on counters, HELP present. Skipped when promtool is not installed.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "metrics/exposer.h"
#include "metrics_test_util.h"

namespace {

constexpr const char* kPromtool = "/usr/bin/promtool";

// Runs `promtool check metrics < file`; returns its exit status and combined output.
int run_promtool(const std::string& file, std::string* output) {
  std::string command = std::string(kPromtool) + " check metrics < '" + file + "' 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return -1;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) output->append(buf, n);
  int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

void check_with_promtool(const std::string& exposition) {
  namespace fs = std::filesystem;
  fs::path file = fs::temp_directory_path() / ("sw_metrics_" + std::to_string(getpid()) + ".prom");
  std::ofstream(file) << exposition;
  std::string output;
  int status = run_promtool(file.string(), &output);
  fs::remove(file);
  CHECK_MESSAGE(status == 0, output);
  CHECK_MESSAGE(output.empty(), output);
}

}  // namespace

TEST_CASE("promtool check metrics accepts the exposition") {
  if (access(kPromtool, X_OK) != 0) {
    MESSAGE("skipped: " << kPromtool << " is not installed (Debian package prometheus)");
    return;
  }
  check_with_promtool(sw::metrics_test::render(sw::metrics_test::sample_readings()));
  check_with_promtool(sw::metrics_test::render(sw::metrics::Readings{}));

  // What the exposer serves, including prometheus-cpp's own exposer_* families.
  auto exposer = sw::metrics::Exposer::start("127.0.0.1:0", sw::metrics_test::sample_readings);
  REQUIRE(exposer.is_ok());
  std::string response = sw::metrics_test::http_get(exposer.value()->port(), "/metrics");
  size_t body = response.find("\r\n\r\n");
  REQUIRE(body != std::string::npos);
  check_with_promtool(response.substr(body + 4));
}
