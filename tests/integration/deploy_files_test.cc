// Deployment files (docker/, grafana/), checked offline:
//   deploy_files  docker/docker-compose.yml is valid for docker-compose and has every service
//                 (shards with wal_level=logical); the shardwire config it mounts passes
//                 `shardwire check`; the Dockerfile builds the binary path CMake produces and its
//                 runtime stage installs the package of every library the binary links; the
//                 Grafana dashboard parses, has every row, and each panel a datasource uid and an
//                 expression; provisioning points at what compose mounts.
//   prometheus    a real Prometheus (the Debian package's binary, on a loopback port, 1 s scrape
//                 interval) scrapes a real shardwire in front of two shards after traffic (keyed
//                 statements, a scatter read, a transaction, a division by zero, a failed login,
//                 a reload, a bucket move); `promtool check metrics` accepts /metrics, every
//                 metric family the dashboard relies on is exported, the rebalance panels show the
//                 move's progress and time to finish during its (throttled) copy, and EVERY
//                 expression of the dashboard returns a non-empty result.
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "harness/sharded_cluster.h"
#include "it_test.h"
#include "router/bucket_hash.h"

#ifndef SHARDWIRE_SOURCE_DIR
#define SHARDWIRE_SOURCE_DIR "."
#endif

using namespace it;

namespace {

std::string source(const std::string& rel) { return std::string(SHARDWIRE_SOURCE_DIR) + "/" + rel; }

std::string tool(const std::string& debian_path, const std::string& name) {
  return access(debian_path.c_str(), X_OK) == 0 ? debian_path : name;
}
std::string python3() { return tool("/usr/bin/python3", "python3"); }
std::string curl() { return tool("/usr/bin/curl", "curl"); }
std::string docker_compose() { return tool("/usr/bin/docker-compose", "docker-compose"); }
std::string prometheus_bin() { return tool("/usr/bin/prometheus", "prometheus"); }
std::string promtool() { return tool("/usr/bin/promtool", "promtool"); }

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(text);
  while (std::getline(in, cur, sep)) out.push_back(cur);
  return out;
}

// ---- docker-compose config ---------------------------------------------------------------------

// `docker-compose config` output: service name -> its block of text (2-space indented YAML).
std::map<std::string, std::string> compose_services(const std::string& config) {
  std::map<std::string, std::string> services;
  bool in_services = false;
  std::string current;
  for (const std::string& line : split(config, '\n')) {
    if (line.empty()) continue;
    if (line[0] != ' ') {
      in_services = line == "services:";
      current.clear();
      continue;
    }
    if (!in_services) continue;
    if (line.size() > 2 && line[2] != ' ' && line.back() == ':' && line.rfind("  ", 0) == 0) {
      current = line.substr(2, line.size() - 3);
      services[current];
      continue;
    }
    if (!current.empty()) services[current] += line + "\n";
  }
  return services;
}

CommandResult compose(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {docker_compose(), "-f", source("docker/docker-compose.yml")};
  argv.insert(argv.end(), args.begin(), args.end());
  CommandOptions options;
  options.cwd = source("docker");
  return run_command(argv, "", 120s, options);
}

// ---- the dashboard -----------------------------------------------------------------------------

// Walks the dashboard JSON with python3's json module (also inside collapsed rows) and prints one
// tab-separated line per row, panel, target and template variable.
const char* const kDashboardWalk = R"PY(
import json, sys
def clean(s):
    return " ".join(str(s).split())
def uid(ds):
    return ds.get("uid", "") if isinstance(ds, dict) else ""
d = json.load(open(sys.argv[1]))
print("META\t%s\t%s\t%s" % (clean(d.get("title", "")), clean(d.get("uid", "")), d.get("schemaVersion", "")))
def walk(panels):
    for p in panels:
        if p.get("type") == "row":
            print("ROW\t%s" % clean(p.get("title", "")))
            walk(p.get("panels", []))
            continue
        targets = p.get("targets", [])
        print("PANEL\t%s\t%s\t%s\t%d" % (clean(p.get("title", "")), p.get("type", ""), uid(p.get("datasource")), len(targets)))
        for t in targets:
            print("TARGET\t%s\t%s\t%s" % (clean(p.get("title", "")), uid(t.get("datasource", p.get("datasource"))), clean(t.get("expr", ""))))
walk(d.get("panels", []))
for v in d.get("templating", {}).get("list", []):
    print("VAR\t%s\t%s" % (v.get("name", ""), uid(v.get("datasource"))))
)PY";

struct DashPanel {
  std::string title, type, datasource_uid;
  int targets = 0;
};
struct DashTarget {
  std::string panel, datasource_uid, expr;
};
struct Dashboard {
  std::string title, uid, schema_version;
  std::vector<std::string> rows;
  std::vector<DashPanel> panels;
  std::vector<DashTarget> targets;
  std::vector<std::string> variables;
};

Dashboard load_dashboard(const std::string& path) {
  CommandResult r = run_command({python3(), "-c", kDashboardWalk, path}, "", 60s);
  if (r.exit_code != 0) throw std::runtime_error("dashboard JSON walk failed: " + r.describe());
  Dashboard d;
  for (const std::string& line : split(r.out, '\n')) {
    std::vector<std::string> f = split(line, '\t');
    if (f.empty()) continue;
    if (f[0] == "META" && f.size() >= 4) {
      d.title = f[1];
      d.uid = f[2];
      d.schema_version = f[3];
    } else if (f[0] == "ROW" && f.size() >= 2) {
      d.rows.push_back(f[1]);
    } else if (f[0] == "PANEL" && f.size() >= 5) {
      d.panels.push_back({f[1], f[2], f[3], std::stoi(f[4])});
    } else if (f[0] == "TARGET" && f.size() >= 3) {
      d.targets.push_back({f[1], f[2], f.size() >= 4 ? f[3] : ""});
    } else if (f[0] == "VAR" && f.size() >= 2) {
      d.variables.push_back(f[1]);
    }
  }
  return d;
}

const std::vector<std::string> kRows = {"Traffic", "Merged reads",        "Latency", "Pools",
                                        "Errors",  "Directory & buckets", "Mover",   "Two-phase commit"};

// Grafana's variables as a dashboard user sees them: $__rate_interval with a 1 s scrape interval
// is at least 4 scrapes; "All" instances.
std::string substitute_variables(std::string expr) {
  const std::vector<std::pair<std::string, std::string>> vars = {
      {"${__rate_interval}", "1m"}, {"$__rate_interval", "1m"}, {"${__interval}", "15s"},
      {"$__interval", "15s"},       {"${__range}", "5m"},       {"$__range", "5m"},
      {"${instance}", ".*"},        {"$instance", ".*"},        {"${job}", "shardwire"},
      {"$job", "shardwire"}};
  for (const auto& [from, to] : vars) {
    for (size_t at = expr.find(from); at != std::string::npos; at = expr.find(from, at + to.size()))
      expr.replace(at, from.size(), to);
  }
  return expr;
}

// ---- Prometheus HTTP API -----------------------------------------------------------------------

struct PromAnswer {
  bool transport_ok = false;
  bool success = false;
  int series = 0;  // vector/matrix entries; 1 for a scalar/string
  std::string first_value;
  std::string body;
};

PromAnswer prom_query(int port, const std::string& expr) {
  PromAnswer a;
  CommandResult r =
      run_command({curl(), "-sS", "--max-time", "10", "--get", "--data-urlencode", "query=" + expr,
                   "http://127.0.0.1:" + std::to_string(port) + "/api/v1/query"},
                  "", 20s);
  a.body = r.out + r.err;
  if (r.exit_code != 0) return a;
  a.transport_ok = true;
  a.success = contains(r.out, "\"status\":\"success\"");
  size_t result = r.out.find("\"result\":");
  if (result == std::string::npos) return a;
  size_t open = result + 9;
  if (open < r.out.size() && r.out[open] == '[') {
    if (r.out.compare(open, 2, "[]") == 0) return a;
    size_t metrics = 0;
    for (size_t at = r.out.find("\"metric\":", open); at != std::string::npos;
         at = r.out.find("\"metric\":", at + 1))
      ++metrics;
    a.series = metrics ? static_cast<int>(metrics) : 1;  // scalar: [ts, "v"]
  }
  // The first sample's value: [<ts>,"<value>"].
  size_t value = r.out.find("\"value\":[", open);
  if (value == std::string::npos) value = r.out.find('[', open);
  if (value != std::string::npos) {
    size_t q1 = r.out.find('"', r.out.find(',', value));
    size_t q2 = q1 == std::string::npos ? q1 : r.out.find('"', q1 + 1);
    if (q2 != std::string::npos) a.first_value = r.out.substr(q1 + 1, q2 - q1 - 1);
  }
  return a;
}

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

double to_double(const std::string& s) {
  try {
    return std::stod(s);
  } catch (...) {
    return -1;
  }
}

// Every metric family the dashboard and docs/architecture.md §11 rely on (`# TYPE` lines of /metrics).
const std::vector<std::string> kFamilies = {"shardwire_client_connections",
                                            "shardwire_client_logins_total",
                                            "shardwire_server_connections",
                                            "shardwire_pool_waiting_clients",
                                            "shardwire_pool_max_wait_seconds",
                                            "shardwire_queries_total",
                                            "shardwire_transactions_total",
                                            "shardwire_query_duration_seconds",
                                            "shardwire_backend_errors_total",
                                            "shardwire_client_received_bytes_total",
                                            "shardwire_client_sent_bytes_total",
                                            "shardwire_server_received_bytes_total",
                                            "shardwire_server_sent_bytes_total",
                                            "shardwire_parse_cache_hits_total",
                                            "shardwire_parse_cache_misses_total",
                                            "shardwire_merged_reads_total",
                                            "shardwire_merged_rows_total",
                                            "shardwire_directory_version",
                                            "shardwire_directory_age_seconds",
                                            "shardwire_directory_lease_valid",
                                            "shardwire_buckets",
                                            "shardwire_config_reloads_total",
                                            "shardwire_build_info",
                                            "shardwire_mover_copied_rows_total",
                                            "shardwire_mover_copied_bytes_total",
                                            "shardwire_mover_applied_changes_total",
                                            "shardwire_mover_lag_bytes",
                                            "shardwire_mover_lag_seconds",
                                            "shardwire_mover_verify_mismatches_total",
                                            "shardwire_cutover_pause_seconds",
                                            "shardwire_cutover_queued_writes",
                                            "shardwire_cutover_drain_aborts_total",
                                            "shardwire_mover_stream_errors_total",
                                            "shardwire_cutover_drain_terminations_total",
                                            "shardwire_migrations",
                                            "shardwire_rollback_window_remaining_seconds",
                                            "shardwire_rebalance_migrations",
                                            "shardwire_rebalance_copied_rows",
                                            "shardwire_rebalance_rows",
                                            "shardwire_rebalance_copied_bytes",
                                            "shardwire_rebalance_bytes",
                                            "shardwire_rebalance_rows_per_second",
                                            "shardwire_rebalance_bytes_per_second",
                                            "shardwire_rebalance_eta_seconds",
                                            "shardwire_cross_shard_transactions_total",
                                            "shardwire_two_phase_commit_seconds",
                                            "shardwire_two_phase_recovered_total",
                                            "shardwire_two_phase_in_doubt",
                                            "process_cpu_seconds_total",
                                            "process_resident_memory_bytes",
                                            "process_open_fds"};

// prometheus-cpp writes `# TYPE x counter` with the _total suffix for counters; the text format
// also allows the family name without it.
bool has_family(const std::string& scrape, const std::string& name) {
  if (contains(scrape, "# TYPE " + name + " ")) return true;
  const std::string suffix = "_total";
  if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
    return contains(scrape, "# TYPE " + name.substr(0, name.size() - suffix.size()) + " counter");
  return false;
}

}  // namespace

TEST_SUITE("deploy_files") {
  TEST_CASE("docker-compose.yml is valid and has every service, shards with wal_level=logical") {
    CommandResult quiet = compose({"config", "-q"});
    INFO("docker-compose config -q: " << quiet.describe());
    REQUIRE_MESSAGE(quiet.exit_code == 0,
                    "docker-compose is the Debian package docker-compose (scripts/install-deps.sh)");

    CommandResult full = compose({"config"});
    REQUIRE_MESSAGE(full.exit_code == 0, full.describe());
    auto services = compose_services(full.out);
    INFO("docker-compose config:\n" << full.out);
    for (const char* name :
         {"catalog", "shard0", "shard1", "shard2", "shardwire-init", "shardwire", "prometheus", "grafana"})
      CHECK_MESSAGE(services.count(name) == 1, "service " << name << " is missing");
    REQUIRE(services.size() >= 8);

    for (const char* name : {"catalog", "shard0", "shard1", "shard2"}) {
      CAPTURE(name);
      CHECK(contains(services[name], "image: postgres:15"));
      CHECK(contains(services[name], "pg_isready"));
    }
    for (const char* name : {"shard0", "shard1", "shard2"}) {
      CAPTURE(name);
      CHECK(contains(services[name], "wal_level=logical"));
      CHECK(contains(services[name], "max_replication_slots=20"));
      CHECK(contains(services[name], "max_wal_senders=20"));
    }
    // shardwire and its one-shot init: the image built from docker/Dockerfile, the compose config.
    for (const char* name : {"shardwire", "shardwire-init"}) {
      CAPTURE(name);
      CHECK(contains(services[name], "dockerfile: docker/Dockerfile"));
      CHECK(contains(services[name], "shardwire.compose.yaml:/etc/shardwire/shardwire.yaml"));
    }
    CHECK(contains(services["shardwire-init"], "- init"));
    for (const char* db : {"catalog", "shard0", "shard1", "shard2"})
      CHECK_MESSAGE(
          contains(services["shardwire-init"], std::string(db) + ":\n        condition: service_healthy"),
          "shardwire-init waits for " << db);
    CHECK(contains(services["shardwire"], "condition: service_completed_successfully"));
    CHECK(contains(services["shardwire"], "target: 6432"));
    CHECK(contains(services["shardwire"], "target: 9930"));
    CHECK(contains(services["prometheus"], "prom/prometheus"));
    CHECK(contains(services["prometheus"], "prometheus.yml:/etc/prometheus/prometheus.yml"));
    CHECK(contains(services["prometheus"], "target: 9090"));
    CHECK(contains(services["grafana"], "grafana/grafana"));
    CHECK(contains(services["grafana"], "target: 3000"));
    CHECK(contains(services["grafana"], "grafana/provisioning:/etc/grafana/provisioning"));
    CHECK(contains(services["grafana"], "grafana/dashboards:/etc/grafana/dashboards"));

    // Prometheus scrapes the port shardwire's compose config exposes metrics on.
    std::string prom = read_file(source("docker/prometheus.yml"));
    CHECK(contains(prom, "shardwire:9930"));
    CHECK(contains(prom, "job_name: shardwire"));
  }

  TEST_CASE("the compose config passes shardwire check, listens on every interface, exports metrics") {
    std::string bin = shardwire_binary();
    REQUIRE_MESSAGE(!bin.empty(), "shardwire is not built");
    std::string path = source("docker/shardwire.compose.yaml");
    std::string text = read_file(path);
    REQUIRE_MESSAGE(!text.empty(), path << " is missing");
    CommandResult r = run_command({bin, "check", "--config", path}, "", 15s);
    INFO(r.describe());
    CHECK(r.exit_code == 0);
    CHECK(contains(text, "host: 0.0.0.0"));
    CHECK(contains(text, "\"0.0.0.0:9930\""));
    for (const char* host : {"host=catalog ", "host=shard0 ", "host=shard1 ", "host=shard2 "})
      CHECK_MESSAGE(contains(text, host), host);
  }

  TEST_CASE("the Dockerfile builds what CMake builds and installs the package of every linked library") {
    std::string dockerfile = read_file(source("docker/Dockerfile"));
    REQUIRE(!dockerfile.empty());
    size_t runtime_at = dockerfile.find("FROM debian:bookworm-slim");
    REQUIRE_MESSAGE(runtime_at != std::string::npos, "no bookworm-slim runtime stage");
    std::string build_stage = dockerfile.substr(0, runtime_at);
    std::string runtime = dockerfile.substr(runtime_at);
    CHECK(contains(build_stage, "FROM debian:bookworm AS build"));
    CHECK(contains(build_stage, "scripts/install-deps.sh"));
    CHECK(contains(build_stage,
                   "cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DSHARDWIRE_TESTS=OFF"));
    CHECK(contains(runtime, "EXPOSE 6432 9930"));
    CHECK(contains(runtime, "USER shardwire"));
    CHECK(contains(runtime, "ENTRYPOINT [\"/usr/local/bin/shardwire\"]"));

    std::string bin = shardwire_binary();
    REQUIRE_MESSAGE(!bin.empty(), "shardwire is not built");
    // The Dockerfile copies build/proxy/app/shardwire: the path CMake gives the target.
    const std::string rel = "/proxy/app/shardwire";
    const bool rel_path =
        bin.size() > rel.size() && bin.compare(bin.size() - rel.size(), rel.size(), rel) == 0;
    CHECK_MESSAGE(rel_path, bin);
    CHECK(contains(build_stage, "build" + rel));
    CHECK(contains(runtime, "/src/build" + rel));

    // Every DT_NEEDED library of the binary comes from a package the runtime stage installs (or
    // from bookworm-slim's base).
    CommandResult needed = run_command({"readelf", "-d", bin}, "", 30s);
    REQUIRE_MESSAGE(needed.exit_code == 0, needed.describe());
    std::set<std::string> base = {"libc6", "libgcc-s1", "libstdc++6", "zlib1g"};
    // A sanitized binary (scripts/test.sh) also needs the sanitizer runtimes, which no image ships.
    if (sanitized_mode()) base.insert({"libasan8", "libubsan1", "libtsan2"});
    int libs = 0;
    for (const std::string& line : split(needed.out, '\n')) {
      size_t open = line.find("Shared library: [");
      if (open == std::string::npos) continue;
      std::string lib = line.substr(open + 17, line.find(']', open) - open - 17);
      ++libs;
      CommandResult owner = run_command({"dpkg", "-S", lib}, "", 30s);
      // Every package with a file of that name (libm.so.6: libc6, and libc6-i386 for /lib32).
      std::vector<std::string> packages;
      for (const std::string& o : split(owner.out, '\n')) {
        size_t colon = o.find(": ");
        if (colon == std::string::npos) continue;
        std::string file = o.substr(colon + 2);
        if (file.size() > lib.size() &&
            file.compare(file.size() - lib.size() - 1, lib.size() + 1, "/" + lib) == 0) {
          std::string name = o.substr(0, colon);
          packages.push_back(name.substr(0, name.find(':')));  // drop :amd64
        }
      }
      CAPTURE(lib);
      REQUIRE_MESSAGE(!packages.empty(), "no package owns " << lib << ": " << owner.describe());
      if (std::any_of(packages.begin(), packages.end(),
                      [&](const std::string& p) { return base.count(p) != 0; }))
        continue;
      const std::string package = packages.front();
      const bool installed =
          contains(runtime, " " + package + " ") || contains(runtime, " " + package + "\n");
      CHECK_MESSAGE(installed, "the runtime stage does not install " << package << " (for " << lib << ")");
    }
    CHECK(libs >= 4);
  }

  TEST_CASE(
      "the Grafana dashboard parses; every row, and every panel with a datasource uid and an expression") {
    const std::string path = source("grafana/dashboards/shardwire.json");
    Dashboard d = load_dashboard(path);
    CHECK(d.title == "shardwire");
    CHECK(d.uid == "shardwire");
    CHECK(to_double(d.schema_version) >= 36);
    for (const std::string& row : kRows)
      CHECK_MESSAGE(std::find(d.rows.begin(), d.rows.end(), row) != d.rows.end(),
                    "row \"" << row << "\" is missing");
    REQUIRE(d.panels.size() >= kRows.size() * 2);

    std::string datasources = read_file(source("grafana/provisioning/datasources/prometheus.yml"));
    CHECK(contains(datasources, "uid: prometheus"));
    CHECK(contains(datasources, "url: http://prometheus:9090"));
    for (const DashPanel& p : d.panels) {
      CAPTURE(p.title);
      CHECK_MESSAGE(p.datasource_uid == "prometheus", "panel datasource uid \"" << p.datasource_uid << "\"");
      CHECK_MESSAGE(p.targets >= 1, "panel has no targets");
    }
    std::set<std::string> titles;
    for (const DashPanel& p : d.panels)
      CHECK_MESSAGE(titles.insert(p.title).second, "duplicate panel title " << p.title);
    std::set<std::string> with_expr;
    for (const DashTarget& t : d.targets) {
      CAPTURE(t.panel);
      CHECK_MESSAGE(t.datasource_uid == "prometheus", "target datasource uid \"" << t.datasource_uid << "\"");
      CHECK_MESSAGE(!t.expr.empty(), "empty expression");
      if (!t.expr.empty()) with_expr.insert(t.panel);
      std::string expr = substitute_variables(t.expr);
      CHECK_MESSAGE(!contains(expr, "$"), "unknown Grafana variable in " << t.expr);
    }
    for (const DashPanel& p : d.panels)
      CHECK_MESSAGE(with_expr.count(p.title) == 1, p.title << " has no expression");

    // Provisioning: the provider reads the folder compose mounts the dashboards at.
    std::string provider = read_file(source("grafana/provisioning/dashboards/shardwire.yml"));
    CHECK(contains(provider, "path: /etc/grafana/dashboards"));
    CHECK(contains(provider, "type: file"));
  }

}  // TEST_SUITE("deploy_files")

namespace {

// A bucket move of 600 rows copied at 150 rows/s: while it copies, the dashboard's rebalance
// panels show it (rows, progress between 0 and 100 %, a time to finish); then it completes.
void check_rebalance_panels(const Dashboard& dashboard, ShardedSetup& setup, ProxyProcess& proxy,
                            int prom_port) {
  std::map<std::string, std::string> exprs;  // panel title -> its first expression
  for (const DashTarget& t : dashboard.targets)
    if (exprs.count(t.panel) == 0) exprs[t.panel] = substitute_variables(t.expr);
  for (const char* panel : {"Rebalance progress", "Rebalance time to finish", "Rebalance migrations"})
    REQUIRE_MESSAGE(exprs.count(panel) == 1, "the dashboard has no panel \"" << panel << "\"");
  uint32_t bucket = 0;  // on s0: bucket i starts on shard i mod 2
  int64_t key = 1;
  for (;; ++key) {
    bucket = sw::router::bucket_of_hash(sw::router::hash_int8(key), static_cast<uint32_t>(setup.buckets()));
    if (bucket % 2 == 0) break;
  }
  PgConn s0 = setup.shard(0);
  REQUIRE_OK(s0.exec("INSERT INTO orders (tenant_id, note) SELECT " + std::to_string(key) +
                     ", 'moving' FROM generate_series(1, 600)"));
  ConnectResult console = connect(proxy.conninfo("admin", "adminpw", "sslmode=disable dbname=shardwire"));
  REQUIRE_MESSAGE(console.ok, console.error);
  PgResult moved = console.conn.exec("MOVE BUCKETS " + std::to_string(bucket) + " TO s1");
  REQUIRE_MESSAGE(moved.ok(), moved.describe());

  std::string progress, eta, count;
  bool shown = wait_until(
      [&] {
        progress = prom_query(prom_port, exprs["Rebalance progress"]).first_value;
        eta = prom_query(prom_port, exprs["Rebalance time to finish"]).first_value;
        count = prom_query(prom_port, exprs["Rebalance migrations"]).first_value;
        return !progress.empty() && to_double(progress) > 0 && to_double(progress) < 100 && !eta.empty() &&
               to_double(eta) > 0 && count == "1";
      },
      20s, 250ms);
  MESSAGE("rebalance panels during the copy: progress " << progress << " %, time to finish " << eta
                                                        << " s, migrations " << count);
  CHECK_MESSAGE(shown, "the rebalance panels never showed the copy: progress " << progress << ", eta " << eta
                                                                               << ", migrations " << count);
  bool done = wait_until(
      [&] {
        PgResult r = console.conn.exec("SHOW MIGRATIONS");
        return r.ok() && r.rows() == 1 && r.value(0, 4) == "done";
      },
      60s, 250ms);
  CHECK_MESSAGE(done, "the move did not finish; proxy log:\n" << proxy.log_tail());
}

}  // namespace

TEST_SUITE("prometheus") {
  TEST_CASE("a real Prometheus scraping shardwire returns data for every dashboard expression") {
    PROXY_ONLY();
    REQUIRE_MESSAGE(!shardwire_binary().empty(), "shardwire is not built");
    Dashboard dashboard = load_dashboard(source("grafana/dashboards/shardwire.json"));
    REQUIRE(!dashboard.targets.empty());

    // shardwire in front of two shards (and a catalog), metrics on a loopback port.
    const int metrics_port = free_port();
    ShardedOptions options;
    options.shards = 2;
    options.proxy.extra_yaml =
        "metrics:\n  listen: \"127.0.0.1:" + std::to_string(metrics_port) + "\"\n" +
        "admin:\n  users: [admin]\nmover:\n  copy_rows_per_sec: 150\n  rollback_window: 1s\n";
    options.proxy.users.push_back({"admin", "adminpw"});
    ShardedSetup setup(shared_cluster(), options);
    setup.init_or_throw();
    std::unique_ptr<ProxyProcess> proxy = setup.start_proxy();
    INFO("proxy config:\n" << proxy->config_text());
    bool metrics_up = wait_until([&] { return port_accepts(metrics_port); }, 10s, 50ms);
    REQUIRE_MESSAGE(metrics_up, "shardwire does not serve /metrics on 127.0.0.1:"
                                    << metrics_port << " (metrics.listen); proxy log:\n"
                                    << proxy->log_tail());
    const std::string metrics_url = "http://127.0.0.1:" + std::to_string(metrics_port) + "/metrics";

    // Prometheus: its own instance, temp storage, loopback port, 1 s scrapes of that shardwire.
    TempDir prom_dir("shardwire-prometheus-");
    const int prom_port = free_port();
    write_file(prom_dir.file("prometheus.yml"),
               "global:\n"
               "  scrape_interval: 1s\n"
               "  scrape_timeout: 1s\n"
               "  evaluation_interval: 1s\n"
               "scrape_configs:\n"
               "  - job_name: shardwire\n"
               "    static_configs:\n"
               "      - targets: [\"127.0.0.1:" +
                   std::to_string(metrics_port) + "\"]\n");
    Background prometheus({prometheus_bin(), "--config.file=" + prom_dir.file("prometheus.yml"),
                           "--storage.tsdb.path=" + prom_dir.file("data"),
                           "--web.listen-address=127.0.0.1:" + std::to_string(prom_port), "--log.level=warn"},
                          prom_dir.file("prometheus.log"));
    auto prom_log = [&] { return tail_lines(read_file(prom_dir.file("prometheus.log")), 30); };
    bool ready = wait_until(
        [&] {
          if (!prometheus.running()) return false;
          CommandResult r = run_command({curl(), "-sf", "--max-time", "2",
                                         "http://127.0.0.1:" + std::to_string(prom_port) + "/-/ready"},
                                        "", 5s);
          return r.exit_code == 0;
        },
        60s, 200ms);
    REQUIRE_MESSAGE(ready, "Prometheus did not become ready; log:\n" << prom_log());
    bool scraped = wait_until([&] { return prom_query(prom_port, "up{job=\"shardwire\"} == 1").series == 1; },
                              30s, 250ms);
    REQUIRE_MESSAGE(scraped, "Prometheus never scraped shardwire successfully: "
                                 << prom_query(prom_port, "up").body << "\n"
                                 << prom_log());

    // Traffic: DDL on every shard, keyed writes and reads (simple and extended protocol), a
    // scatter read, a transaction, a statement on the default shard, a division by zero (SQLSTATE
    // class 22), a failed login, a reload.
    {
      PgConn c = connect_or_throw(proxy->conninfo());
      REQUIRE_OK(
          // The primary key holds the shard key: the mover moves rows by it (the bucket move below).
          c.exec("CREATE TABLE orders (id bigserial, tenant_id bigint NOT NULL, note text, PRIMARY KEY "
                 "(tenant_id, "
                 "id))"));
      for (int tenant = 1; tenant <= 20; ++tenant) {
        REQUIRE_OK(c.exec("INSERT INTO orders (tenant_id, note) VALUES (" + std::to_string(tenant) +
                          ", 'metrics')"));
        REQUIRE_OK(c.exec_params("SELECT note FROM orders WHERE tenant_id = $1", {std::to_string(tenant)}));
      }
      PgResult scatter = c.exec("SELECT tenant_id, note FROM orders");
      REQUIRE_MESSAGE(scatter.ok(), scatter.describe());
      CHECK(scatter.rows() == 20);
      REQUIRE_OK(c.exec("BEGIN"));
      REQUIRE_OK(c.exec("INSERT INTO orders (tenant_id, note) VALUES (7, 'tx')"));
      REQUIRE_OK(c.exec("UPDATE orders SET note = 'tx2' WHERE tenant_id = 7"));
      REQUIRE_OK(c.exec("COMMIT"));
      REQUIRE_OK(c.exec("SELECT 1"));
      PgResult div = c.exec("SELECT 1/0");
      CHECK_MESSAGE(div.sqlstate() == "22012", div.describe());
      REQUIRE_OK(c.exec("SELECT 2"));
    }
    ConnectResult bad = connect(proxy->conninfo("app", "wrong-password"));
    CHECK_FALSE(bad.ok);
    check_rebalance_panels(dashboard, setup, *proxy, prom_port);
    proxy->signal(SIGHUP);
    CHECK_MESSAGE(proxy->wait_for_log("config reloaded", 10s), proxy->log_tail());
    const double traffic_done = unix_now();

    // /metrics as Prometheus reads it: promtool's lint accepts it, every family is there.
    CommandResult scrape = run_command({curl(), "-sS", "--max-time", "5", metrics_url}, "", 10s);
    REQUIRE_MESSAGE(scrape.exit_code == 0, scrape.describe());
    CommandResult lint = run_command({promtool(), "check", "metrics"}, scrape.out, 30s);
    CHECK_MESSAGE(lint.exit_code == 0, "promtool check metrics: " << lint.describe());
    std::string missing;
    for (const std::string& family : kFamilies)
      if (!has_family(scrape.out, family)) missing += " " + family;
    CHECK_MESSAGE(missing.empty(), "metric families missing from /metrics:" << missing);
    CHECK(contains(scrape.out, "shardwire_backend_errors_total{class=\"22\"}"));

    // Two scrapes after the traffic (1 s interval), then every expression of the dashboard.
    bool caught_up = wait_until(
        [&] {
          PromAnswer a = prom_query(prom_port, "timestamp(up{job=\"shardwire\"})");
          return a.series == 1 && to_double(a.first_value) > traffic_done + 2.2;
        },
        30s, 250ms);
    REQUIRE_MESSAGE(caught_up, "Prometheus did not scrape twice after the traffic\n" << prom_log());
    CHECK(prom_query(prom_port, "up{job=\"shardwire\"}").first_value == "1");

    std::ostringstream report;
    int failed = 0;
    for (const DashTarget& t : dashboard.targets) {
      std::string expr = substitute_variables(t.expr);
      PromAnswer a = prom_query(prom_port, expr);
      bool good = a.transport_ok && a.success && a.series > 0;
      report << (good ? "ok    " : "EMPTY ") << a.series << " series, first "
             << (a.first_value.empty() ? "-" : a.first_value) << "  [" << t.panel << "] " << expr << "\n";
      if (!good) {
        ++failed;
        CHECK_MESSAGE(good, "panel \"" << t.panel << "\": " << expr << "\n  -> " << tail_lines(a.body, 5));
      }
    }
    MESSAGE(dashboard.targets.size() << " dashboard expressions, " << failed << " without data:\n"
                                     << report.str());
    CHECK(failed == 0);
  }

}  // TEST_SUITE("prometheus")
