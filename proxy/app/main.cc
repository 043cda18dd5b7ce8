// shardwire command line: `shardwire --config FILE` runs the proxy.
#include <cstdio>
#include <cstring>
#include <string>

#include "app/proxy.h"
#include "catalog/init.h"
#include "config/config.h"

namespace {

int usage(FILE* out) {
  std::fprintf(out,
               "usage: shardwire --config FILE        run the proxy\n"
               "       shardwire init --config FILE   create the catalog, the shard schemas and the\n"
               "                                      initial directory (idempotent)\n"
               "       shardwire check --config FILE  validate a config file and exit\n"
               "       shardwire --version\n");
  return out == stderr ? 64 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string command = "run";
  std::string config_path;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if ((arg == "--config" || arg == "-c") && i + 1 < argc) config_path = argv[++i];
    else if (arg == "--version") {
      std::printf("shardwire %s\n", SHARDWIRE_VERSION);
      return 0;
    } else if (arg == "--help" || arg == "-h") return usage(stdout);
    else if (i == 1 && (arg == "check" || arg == "init")) command = arg;
    else return usage(stderr);
  }
  if (config_path.empty()) return usage(stderr);
  if (command == "check" || command == "init") {
    sw::config::Config config;
    try {
      config = sw::config::load_file(config_path);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s\n", e.what());
      return 78;
    }
    if (command == "check") {
      std::printf("%s: ok\n", config_path.c_str());
      return 0;
    }
    sw::Status status = sw::catalog::run_init(config);
    if (!status) {
      std::fprintf(stderr, "shardwire init failed: %s\n", status.message.c_str());
      return status.fault == sw::Fault::Config ? 78 : 1;
    }
    return 0;
  }
  return sw::app::Proxy(config_path).run();
}
