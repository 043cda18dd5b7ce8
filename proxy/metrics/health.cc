#include "metrics/health.h"

#include <civetweb.h>

#include <cstring>
#include <map>
#include <memory>
#include <mutex>

namespace sw::metrics {
namespace {

// Checks by listening port: civetweb's callbacks carry no pointer of ours, and the port tells
// the servers of one process apart (tests run several).
struct ProbeTable {
  std::mutex mu;
  std::map<int, std::shared_ptr<const ReadinessCheck>> checks;
};

ProbeTable& probes() {
  static ProbeTable* table = new ProbeTable();  // never destroyed: HTTP threads may outlive statics
  return *table;
}

std::shared_ptr<const ReadinessCheck> check_for(int port) {
  ProbeTable& table = probes();
  std::lock_guard<std::mutex> lock(table.mu);
  auto it = table.checks.find(port);
  return it == table.checks.end() ? nullptr : it->second;
}

int reply(mg_connection* connection, int status, const char* status_text, const std::string& body) {
  mg_printf(connection,
            "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %zu\r\n"
            "Cache-Control: no-store\r\nConnection: close\r\n\r\n%s",
            status, status_text, body.size(), body.c_str());
  return status;
}

bool is(const char* uri, const char* path) { return uri != nullptr && std::strcmp(uri, path) == 0; }

}  // namespace

void add_probes(int port, ReadinessCheck check) {
  ProbeTable& table = probes();
  std::lock_guard<std::mutex> lock(table.mu);
  table.checks[port] = std::make_shared<const ReadinessCheck>(std::move(check));
}

void remove_probes(int port) {
  ProbeTable& table = probes();
  std::lock_guard<std::mutex> lock(table.mu);
  table.checks.erase(port);
}

int answer_probe(mg_connection* connection) {
  const mg_request_info* request = mg_get_request_info(connection);
  if (request == nullptr) return 0;
  const char* uri = request->local_uri;
  if (is(uri, "/live") || is(uri, "/healthz")) return reply(connection, 200, "OK", "live\n");
  if (!is(uri, "/ready") && !is(uri, "/readyz")) return 0;
  std::shared_ptr<const ReadinessCheck> check = check_for(request->server_port);
  Readiness readiness = check && *check ? (*check)() : Readiness{false, "starting"};
  if (readiness.ready) return reply(connection, 200, "OK", "ready\n");
  return reply(connection, 503, "Service Unavailable", "not ready: " + readiness.reason + "\n");
}

}  // namespace sw::metrics
