// The HTTP endpoint Prometheus scrapes (GET /metrics), a pull model: nothing is counted here;
// each scrape asks the app for Readings (collector.h). The same server answers the liveness and
// readiness probes (health.h). Serving runs on prometheus-cpp's own threads (civetweb), never on
// a worker's event loop.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "common/status.h"
#include "metrics/health.h"
#include "metrics/readings.h"

namespace prometheus {
class Exposer;
}

namespace sw::metrics {

class ReadingsCollector;

class Exposer {
 public:
  // Listens on `listen` ("host:port" as metrics.listen in the config: an IPv4 address, a
  // bracketed IPv6 address or a host name resolved once here; port 0 picks a free port) and
  // serves /metrics until destroyed. Never throws: a bad address or a failed bind returns a
  // Fault::Config Status such as "metrics.listen 127.0.0.1:9930: address in use".
  // `read` is called on each scrape from an exposer thread (see ReadingsCollector); it must stay
  // callable until the Exposer is destroyed; so must `ready`, asked on each GET /ready (without
  // it /ready answers 503).
  static Result<std::unique_ptr<Exposer>> start(const std::string& listen, std::function<Readings()> read,
                                                ReadinessCheck ready = {});

  ~Exposer();  // stops serving; waits for a scrape in progress
  Exposer(const Exposer&) = delete;
  Exposer& operator=(const Exposer&) = delete;

  // The port actually bound (the chosen one when `listen` asked for port 0).
  int port() const { return port_; }

 private:
  Exposer() = default;

  std::shared_ptr<ReadingsCollector> collector_;
  std::unique_ptr<prometheus::Exposer> server_;  // declared last: destroyed first
  int port_ = 0;
};

}  // namespace sw::metrics
