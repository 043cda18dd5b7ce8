// shardwire command line: `shardwire --config FILE` runs the proxy.
#include <cstdio>
#include <cstring>
#include <string>

#include "app/proxy.h"
#include "catalog/init.h"
#include "config/config.h"
#include "parser/analyze.h"
#include "router/router.h"

namespace {

int usage(FILE* out) {
  std::fprintf(out,
               "usage: shardwire --config FILE        run the proxy\n"
               "       shardwire init --config FILE   create the catalog, the shard schemas and the\n"
               "                                      initial directory (idempotent)\n"
               "       shardwire route --config FILE SQL  print the route the proxy would take\n"
               "                                      (initial layout; no connection to shards)\n"
               "       shardwire check --config FILE  validate a config file and exit\n"
               "       shardwire --version\n");
  return out == stderr ? 64 : 0;
}

// `shardwire route`: the decision for one SQL string on the initial directory layout.
int print_route(const sw::config::Config& config, const std::string& sql) {
  auto rules =
      sw::router::RoutingRules::from_config(config.sharding, config.file, !config.catalog.dsn.empty());
  if (!rules) {
    std::fprintf(stderr, "%s\n", rules.status().message.c_str());
    return 78;
  }
  std::vector<std::string> shards;
  for (const auto& shard : config.shards) shards.push_back(shard.name);
  auto directory = sw::router::Directory::initial(static_cast<uint32_t>(config.sharding.buckets), shards);
  auto facts = sw::parser::analyze(sql);
  if (!facts) {
    std::fprintf(stderr, "cannot analyze: %s (SQLSTATE %s)\n", facts.status().message.c_str(),
                 facts.status().sqlstate.c_str());
    return 1;
  }
  sw::router::Route route =
      sw::router::route_query(**facts, nullptr, *directory, *rules, sw::router::Explain::Yes);
  std::printf("%s\n", sw::router::describe_route(route, *directory).c_str());
  return route.kind == sw::router::RouteKind::Error ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string command = "run";
  std::string config_path;
  std::string sql;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if ((arg == "--config" || arg == "-c") && i + 1 < argc)
      config_path = argv[++i];
    else if (arg == "--version") {
      std::printf("shardwire %s\n", SHARDWIRE_VERSION);
      return 0;
    } else if (arg == "--help" || arg == "-h")
      return usage(stdout);
    else if (i == 1 && (arg == "check" || arg == "init" || arg == "route"))
      command = arg;
    else if (command == "route" && sql.empty())
      sql = arg;
    else
      return usage(stderr);
  }
  if (config_path.empty()) return usage(stderr);
  if (command == "check" || command == "init" || command == "route") {
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
    if (command == "route") return print_route(config, sql);
    sw::Status status = sw::catalog::run_init(config);
    if (!status) {
      std::fprintf(stderr, "shardwire init failed: %s\n", status.message.c_str());
      return status.fault == sw::Fault::Config ? 78 : 1;
    }
    return 0;
  }
  return sw::app::Proxy(config_path).run();
}
