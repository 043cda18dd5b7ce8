// The probe paths served beside /metrics on metrics.listen, for an orchestrator's liveness and
// readiness checks (docs/architecture.md §11):
//   GET /live, /healthz   200 "live" whenever the process answers HTTP at all.
//   GET /ready, /readyz   200 "ready" when the app's check says it can route, otherwise
//                         503 "not ready: <reason>".
// They are answered from civetweb's begin_request hook on the exposer's HTTP threads, before
// prometheus-cpp's handlers see the request; every other path goes on to them.
#pragma once

#include <functional>
#include <string>

struct mg_connection;

namespace sw::metrics {

struct Readiness {
  bool ready = false;
  std::string reason;  // why not, for a person reading the probe's output; empty when ready
};
using ReadinessCheck = std::function<Readiness()>;

// Routes the probes of the server listening on `port` to `check` (called on an HTTP thread, it
// must stay callable until remove_probes(port)). Without a check /ready answers 503.
void add_probes(int port, ReadinessCheck check);
void remove_probes(int port);

// civetweb's begin_request callback: answers a probe path and returns its HTTP status; returns
// 0 for any other path (civetweb then dispatches it as usual).
int answer_probe(mg_connection* connection);

}  // namespace sw::metrics
