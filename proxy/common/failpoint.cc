#include "common/failpoint.h"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <string>

#include "common/log.h"

namespace sw::failpoint {
namespace {

struct Armed {
  std::string name;   // empty: none
  bool stop = false;  // SIGSTOP instead of SIGKILL
};

std::once_flag g_read_once;
Armed g_armed;

void parse(std::string_view spec) {
  constexpr std::string_view kStop = ":stop";
  g_armed = {};
  if (spec.size() > kStop.size() && spec.substr(spec.size() - kStop.size()) == kStop) {
    g_armed.stop = true;
    spec.remove_suffix(kStop.size());
  }
  g_armed.name = std::string(spec);
}

const Armed& current() {
  std::call_once(g_read_once, [] {
    const char* spec = std::getenv("SHARDWIRE_FAILPOINT");  // NOLINT(concurrency-mt-unsafe): read once
    if (spec != nullptr) parse(spec);
  });
  return g_armed;
}

}  // namespace

void arm(std::string_view spec) {
  (void)current();  // the environment is not read after this
  parse(spec);
}

bool armed(std::string_view name) {
  const Armed& a = current();
  return !a.name.empty() && a.name == name;
}

void hit(std::string_view name) {
  if (!armed(name)) return;
  const bool stop = current().stop;
  LOG_ERROR("failpoint %.*s fired (SHARDWIRE_FAILPOINT, test only): %s", static_cast<int>(name.size()),
            name.data(), stop ? "stopping the process (SIGSTOP)" : "killing the process (SIGKILL)");
  (void)raise(stop ? SIGSTOP : SIGKILL);
  g_armed = {};  // continued after SIGSTOP: it fires once
}

}  // namespace sw::failpoint
