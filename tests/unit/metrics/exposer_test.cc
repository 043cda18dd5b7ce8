#include "metrics/exposer.h"

#include <doctest/doctest.h>

#include <atomic>
#include <string>

#include "metrics_test_util.h"

using sw::Fault;
using sw::metrics::Exposer;
using sw::metrics::Readings;
using sw::metrics_test::http_get;

TEST_CASE("the exposer serves /metrics from read() on each scrape") {
  std::atomic<int> reads{0};
  auto started = Exposer::start("127.0.0.1:0", [&reads] {
    ++reads;
    return sw::metrics_test::sample_readings();
  });
  REQUIRE_MESSAGE(started.is_ok(), started.status().message);
  std::unique_ptr<Exposer> exposer = std::move(started.value());
  REQUIRE(exposer->port() > 0);

  std::string response = http_get(exposer->port(), "/metrics");
  CHECK(response.rfind("HTTP/1.1 200", 0) == 0);
  CHECK(response.find("\nshardwire_build_info{version=\"") != std::string::npos);
  CHECK(response.find("\nshardwire_directory_version 42") != std::string::npos);
  CHECK(reads.load() == 1);
  http_get(exposer->port(), "/metrics");
  CHECK(reads.load() == 2);
}

TEST_CASE("a second exposer on a port in use returns a config error, not an exception") {
  auto first = Exposer::start("127.0.0.1:0", [] { return Readings{}; });
  REQUIRE(first.is_ok());
  std::string listen = "127.0.0.1:" + std::to_string(first.value()->port());
  auto second = Exposer::start(listen, [] { return Readings{}; });
  REQUIRE_FALSE(second.is_ok());
  CHECK(second.status().fault == Fault::Config);
  CHECK(second.status().message == "metrics.listen " + listen + ": address in use");
  // The first one still serves.
  CHECK(http_get(first.value()->port(), "/metrics").find("shardwire_build_info") != std::string::npos);
}

TEST_CASE("a malformed or unresolvable listen address is a config error") {
  for (const char* listen : {"9930", "127.0.0.1:", "127.0.0.1:99999", "127.0.0.1:9x", ":9930"}) {
    CAPTURE(listen);
    auto started = Exposer::start(listen, [] { return Readings{}; });
    REQUIRE_FALSE(started.is_ok());
    CHECK(started.status().fault == Fault::Config);
    CHECK(started.status().message.rfind(std::string("metrics.listen ") + listen + ": ", 0) == 0);
  }
  auto unresolvable = Exposer::start("no-such-host.invalid:9930", [] { return Readings{}; });
  CHECK_FALSE(unresolvable.is_ok());
}

TEST_CASE("a host name is resolved once; localhost works") {
  auto started = Exposer::start("localhost:0", [] { return Readings{}; });
  REQUIRE_MESSAGE(started.is_ok(), started.status().message);
  CHECK(http_get(started.value()->port(), "/metrics").find("shardwire_build_info") != std::string::npos);
}

TEST_CASE("the probes: /live always 200; /ready 200 or 503 with the check's reason; /metrics unchanged") {
  std::atomic<bool> ready{false};
  auto started = Exposer::start(
      "127.0.0.1:0", [] { return sw::metrics_test::sample_readings(); },
      [&ready] {
        return ready.load() ? sw::metrics::Readiness{true, ""}
                            : sw::metrics::Readiness{false, "no directory yet"};
      });
  REQUIRE_MESSAGE(started.is_ok(), started.status().message);
  const int port = started.value()->port();

  for (const char* live : {"/live", "/healthz"}) {
    std::string response = http_get(port, live);
    CHECK(response.rfind("HTTP/1.1 200", 0) == 0);
    CHECK(response.size() >= 5);
    CHECK(response.substr(response.size() - 5) == "live\n");
  }
  std::string not_ready = http_get(port, "/ready");
  CHECK(not_ready.rfind("HTTP/1.1 503", 0) == 0);
  CHECK(not_ready.find("\r\n\r\nnot ready: no directory yet\n") != std::string::npos);
  ready = true;
  for (const char* path : {"/ready", "/readyz"}) {
    std::string response = http_get(port, path);
    CHECK(response.rfind("HTTP/1.1 200", 0) == 0);
    CHECK(response.find("\r\n\r\nready\n") != std::string::npos);
  }
  CHECK(http_get(port, "/metrics").find("\nshardwire_build_info{") != std::string::npos);
  CHECK(http_get(port, "/other").find(" 404 ") != std::string::npos);  // left to civetweb

  // An exposer started without a check is never ready.
  auto bare = Exposer::start("127.0.0.1:0", [] { return Readings{}; });
  REQUIRE(bare.is_ok());
  CHECK(http_get(bare.value()->port(), "/ready").rfind("HTTP/1.1 503", 0) == 0);
}
