// Resource bounds: thousands of idle clients cost little memory each; a client reading a 1 GiB
// result slowly does not make shardwire buffer it; a burst of logins is either served or refused
// clearly while a bystander keeps working; clients that never finish logging in are closed after
// auth.login_timeout. Memory figures are printed with MESSAGE; the bounds asserted are memory
// bounds and login_timeout plus a margin, never speed.
#include <poll.h>
#include <sys/socket.h>

#include "it_test.h"
#include "resource_bounds/client_swarm.h"
#include "resource_bounds/result_stream.h"
#include "resource_bounds/suite_support.h"

using namespace it;
using namespace it::rb;  // the suite's helpers (resource_bounds/)

namespace {

// Sanitizer builds pad every allocation and keep freed memory in a quarantine: their resident
// sizes say nothing about shardwire's, so memory bounds are printed there but not asserted
// (scripts/test.sh runs this suite against a sanitized shardwire with SHARDWIRE_IT_SANITIZED=1).
bool memory_bounds_apply() { return !it::sanitized_mode(); }

// The goal is 16 KiB per idle client. Measured (Release, 2 workers, 2026-12-01): 5.8 KiB after
// an md5 login (6.9 KiB with SCRAM before the exchange's state was dropped at login, 5.95 after),
// 5.9 KiB after a query, +0.4..1.9 KiB for a client idle after a 64 KiB query and a 256 KiB row
// (+416 KiB before grown buffers were given back). The bound keeps margin for allocator and libc
// differences.
constexpr double kIdleKibPerClientBound = 10.0;
// TLS clients: 24 KiB measured, of which OpenSSL 3.0's own state is about 15 KiB (8.3 KiB for
// SSL_new alone, the rest cipher contexts and the session after the handshake), out of reach of
// the 16 KiB goal without replacing OpenSSL. Before drained memory BIOs were replaced, a TLS
// client also kept the largest record burst it ever carried.
constexpr double kIdleTlsKibPerClientBound = 32.0;
// A 64 KiB statement answered with a 256 KiB row: grows a client's buffers, which must not stay.
const std::string kHeavyQuery =
    "SELECT length('" + std::string(64 * 1024, 'q') + "'), length(repeat('y', 262144)), repeat('y', 262144)";

}  // namespace

TEST_SUITE("resource_bounds") {
  TEST_CASE("idle clients: memory per connection is bounded, shardwire raises its own fd limit") {
    PROXY_ONLY();
    const int clients = env_int("SHARDWIRE_IT_IDLE_CLIENTS", 10000);
    raise_own_fd_limit(clients);
    const long hard = rb::own_hard_open_file_limit();
    // shardwire starts with the soft limit daemons usually get: it has to raise its own.
    rb::set_own_open_file_limit(1024);
    ProxyOptions o;
    // md5 by default: an authenticated login without SCRAM's deliberately slow client side.
    o.auth_method = std::getenv("SHARDWIRE_IT_IDLE_AUTH") ? std::getenv("SHARDWIRE_IT_IDLE_AUTH") : "md5";
    ProxyProcess p(shared_cluster(), o);
    restart_with_listen_key(p, "max_client_connections: " + std::to_string(clients + 500));
    rb::set_own_open_file_limit(hard);
    long proxy_fd_limit = rb::max_open_files(p.pid());
    MESSAGE("shardwire started with a soft open file limit of 1024; it runs with " << proxy_fd_limit);
    CHECK_MESSAGE((proxy_fd_limit == 0 || proxy_fd_limit >= clients + 500),
                  "shardwire's open file limit " << proxy_fd_limit << " is below max_client_connections");

    {
      PgConn first = connect_or_throw(p.conninfo());  // the pool fetches the server's parameters
      REQUIRE_OK(first.exec("SELECT 1"));
    }
    sleep_ms(300);
    const long rss_before = rb::rss_kib(p.pid());
    const long pss_before = rb::pss_kib(p.pid());

    rb::ClientSwarm swarm(p.conninfo(), clients);
    auto start = std::chrono::steady_clock::now();
    bool finished = swarm.run(/*max_in_flight=*/200, 240s);
    long long login_ms = ms_since(start);
    REQUIRE_MESSAGE(finished, swarm.unfinished() << " logins unfinished after 240 s\n" << p.log_tail());
    REQUIRE_MESSAGE(swarm.ok() == clients, "failures: " << swarm.sample_errors() << "\n" << p.log_tail());
    sleep_ms(300);
    const long rss_logged_in = rb::rss_kib(p.pid());
    const long pss_logged_in = rb::pss_kib(p.pid());
    double per_client = static_cast<double>(rss_logged_in - rss_before) / clients;
    double pss_per_client = static_cast<double>(pss_logged_in - pss_before) / clients;
    MESSAGE(clients << " idle clients logged in (" << o.auth_method << ") in " << login_ms
                    << " ms; shardwire VmRSS " << rss_before << " -> " << rss_logged_in
                    << " KiB = " << per_client << " KiB per client (Pss " << pss_per_client << " KiB)");

    // Each ran a transaction (a server borrowed and returned) and is idle again.
    REQUIRE(swarm.query_each("SELECT 1", 20s) == clients);
    sleep_ms(300);
    const long rss_after_query = rb::rss_kib(p.pid());
    double per_client_after_query = static_cast<double>(rss_after_query - rss_before) / clients;
    MESSAGE("after one query each: VmRSS " << rss_after_query << " KiB = " << per_client_after_query
                                           << " KiB per client");

    // A share of them send a 64 KiB statement and get a 256 KiB row back, then idle again: buffers
    // grown for that traffic must not stay with each idle client.
    const int heavy = std::min(clients, env_int("SHARDWIRE_IT_HEAVY_CLIENTS", 2000));
    REQUIRE(swarm.query_each(kHeavyQuery, 20s, heavy) == heavy);
    sleep_ms(300);
    const long rss_after_heavy = rb::rss_kib(p.pid());
    double per_heavy_client = static_cast<double>(rss_after_heavy - rss_after_query) / heavy;
    MESSAGE(heavy << " of them sent 64 KiB and received 256 KiB, then idled: VmRSS " << rss_after_heavy
                  << " KiB, +" << per_heavy_client << " KiB per such client");

    auto newcomer_start = std::chrono::steady_clock::now();
    ConnectResult newcomer = connect(p.conninfo(), 20s);
    REQUIRE_MESSAGE(newcomer.ok, newcomer.error);
    CHECK_OK(newcomer.conn.exec("SELECT 1", 20s));
    MESSAGE("a new client logged in and ran SELECT 1 next to them in " << ms_since(newcomer_start) << " ms");

    if (memory_bounds_apply()) {
      CHECK(per_client <= kIdleKibPerClientBound);
      CHECK(per_client_after_query <= kIdleKibPerClientBound);
      CHECK(per_heavy_client <= kIdleKibPerClientBound);
    }
    swarm.close_all();
    CHECK(p.running());
  }

  // TLS adds OpenSSL's per-connection state (SSL object, memory BIOs); its record buffers are
  // released while idle (SSL_MODE_RELEASE_BUFFERS).
  TEST_CASE("idle TLS clients: memory per connection is bounded") {
    PROXY_ONLY();
    const int clients = env_int("SHARDWIRE_IT_IDLE_TLS_CLIENTS", 2000);
    raise_own_fd_limit(clients);
    TempDir dir("shardwire-rb-tls-");
    ProxyOptions o;
    o.auth_method = "md5";
    o.tls_cert_file = dir.file("server.crt");
    o.tls_key_file = dir.file("server.key");
    CommandResult made =
        run_command({"openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost",
                     "-days", "1", "-keyout", o.tls_key_file, "-out", o.tls_cert_file},
                    "", 60s);
    REQUIRE_MESSAGE(made.exit_code == 0, made.describe());
    ProxyProcess p(shared_cluster(), o);
    {
      PgConn first = connect_or_throw(p.conninfo("app", "secret", "sslmode=require"));
      REQUIRE_OK(first.exec("SELECT 1"));
    }
    sleep_ms(300);
    const long rss_before = rb::rss_kib(p.pid());
    rb::ClientSwarm swarm(p.conninfo("app", "secret", "sslmode=require"), clients);
    REQUIRE_MESSAGE(swarm.run(/*max_in_flight=*/100, 240s), swarm.unfinished() << " unfinished\n"
                                                                               << p.log_tail());
    REQUIRE_MESSAGE(swarm.ok() == clients, "failures: " << swarm.sample_errors() << "\n" << p.log_tail());
    REQUIRE(swarm.query_each("SELECT 1", 20s) == clients);
    sleep_ms(300);
    const long rss_after = rb::rss_kib(p.pid());
    double per_client = static_cast<double>(rss_after - rss_before) / clients;
    MESSAGE(clients << " idle TLS clients (md5, one query each): shardwire VmRSS " << rss_before << " -> "
                    << rss_after << " KiB = " << per_client << " KiB per client");
    const int heavy = clients / 2;
    REQUIRE(swarm.query_each(kHeavyQuery, 20s, heavy) == heavy);
    sleep_ms(300);
    const long rss_after_heavy = rb::rss_kib(p.pid());
    double per_heavy_client = static_cast<double>(rss_after_heavy - rss_after) / heavy;
    MESSAGE(heavy << " of them sent 64 KiB and received 256 KiB over TLS, then idled: +" << per_heavy_client
                  << " KiB per such client");
    if (memory_bounds_apply()) {
      CHECK(per_client <= kIdleTlsKibPerClientBound);
      CHECK(per_heavy_client <= kIdleKibPerClientBound);
    }
  }

  // 1 100 000 rows of 1000 'x' = 1.11 GB of DataRows. While the client reads slowly the server must
  // end up blocked writing to shardwire (ClientWrite) and still be at it when the slow phase ends:
  // shardwire stopped reading it. A proxy without backpressure takes the whole result from the
  // server in seconds (measured: 1.06 GB resident, the query finished before the slow phase ended).
  TEST_CASE("a 1 GiB result read slowly: shardwire's memory stays bounded and every byte arrives") {
    PROXY_ONLY();
    constexpr uint32_t kWidth = 1000;
    constexpr uint64_t kRows = 1100000;
    constexpr long kGrowthBoundKib = 16 * 1024;  // measured: 1.5 MiB (output stops at 256 KiB per client)
    const int slow_ms = env_int("SHARDWIRE_IT_SLOW_READ_MS", 8000);
    ProxyOptions o;
    o.auth_method = "trust";  // the raw client below logs in without a password exchange
    ProxyProcess p(shared_cluster(), o);
    PgConn observer = shared_cluster().admin("app");
    // A 16 KiB receive buffer set before connect(): the client's window stays small from the start.
    rb::SmallWindowClient client(p.port(), 16 * 1024, "app", "app");
    const int fd = client.fd();
    RawSocket raw = RawSocket::borrow(fd);

    sleep_ms(200);
    const long rss_before = rb::rss_kib(p.pid());
    rb::RssSampler sampler(p.pid(), 50);
    const std::string sql = "SELECT repeat('x', " + std::to_string(kWidth) + ") FROM generate_series(1, " +
                            std::to_string(kRows) + ")";
    REQUIRE(raw.send_all(wire::query(sql)));
    rb::ResultStream stream(kWidth);
    std::vector<char> buf(1 << 20);
    bool closed = false;
    auto read_some = [&](size_t max) {
      pollfd pfd{fd, POLLIN, 0};
      if (poll(&pfd, 1, 1000) <= 0) return;
      ssize_t n = ::recv(fd, buf.data(), std::min(max, buf.size()), MSG_DONTWAIT);
      if (n > 0)
        stream.feed(std::string_view(buf.data(), static_cast<size_t>(n)));
      else if (n == 0 || (errno != EAGAIN && errno != EINTR))
        closed = true;
    };
    auto going = [&] { return !closed && stream.error().empty() && !stream.complete(); };

    // Slow phase: 4 KiB every 2 ms (about 2 MB/s) while the server could send hundreds of MB/s.
    bool server_waited_on_us = false;
    auto slow_start = std::chrono::steady_clock::now();
    auto next_look = slow_start + 1s;
    while (ms_since(slow_start) < slow_ms && going()) {
      read_some(4096);
      sleep_ms(2);
      if (std::chrono::steady_clock::now() < next_look) continue;
      next_look += 500ms;
      PgResult r = observer.exec(
          "SELECT wait_event FROM pg_stat_activity WHERE state = 'active' AND query LIKE "
          "'SELECT repeat(%'");
      if (r.ok() && r.rows() == 1 && r.value() == "ClientWrite") server_waited_on_us = true;
    }
    PgResult at_end = observer.exec(
        "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE "
        "'SELECT repeat(%'");
    const bool server_still_sending = at_end.ok() && at_end.value() == "1";
    const uint64_t slow_bytes = stream.bytes();
    const long slow_peak = sampler.peak_kib();

    // Fast phase: the rest as fast as it comes, still sampled.
    auto fast_start = std::chrono::steady_clock::now();
    while (going() && ms_since(fast_start) < 120000) read_some(buf.size());
    long long fast_ms = ms_since(fast_start);
    sampler.stop();

    long growth = sampler.peak_kib() - rss_before;
    MESSAGE("slow phase: " << slow_bytes / 1024 << " KiB read in " << slow_ms << " ms, shardwire VmRSS peak "
                           << slow_peak << " KiB (before " << rss_before
                           << " KiB); fast phase: " << (stream.bytes() - slow_bytes) / (1024 * 1024)
                           << " MiB in " << fast_ms << " ms; peak growth over the transfer " << growth
                           << " KiB in " << sampler.samples() << " samples");
    CHECK_MESSAGE(stream.error().empty(), stream.error() << "\n" << p.log_tail());
    CHECK_MESSAGE(!closed, "shardwire closed the connection after " << stream.bytes() << " bytes\n"
                                                                    << p.log_tail());
    CHECK(stream.complete());
    CHECK(stream.rows() == kRows);
    CHECK(stream.command_tag() == "SELECT " + std::to_string(kRows));
    CHECK(stream.bytes() > (uint64_t{1} << 30));
    CHECK_MESSAGE(server_waited_on_us,
                  "the server never waited in ClientWrite: shardwire kept reading from it");
    CHECK_MESSAGE(server_still_sending,
                  "the query had finished on the server while the client was still reading slowly");
    if (memory_bounds_apply()) {
      CHECK(slow_peak - rss_before < kGrowthBoundKib);
      CHECK(growth < kGrowthBoundKib);
    }
    // The session is still in step: the next query on the same connection gets its own answer.
    REQUIRE(raw.send_all(wire::query("SELECT 42")));
    std::string next;
    auto next_start = std::chrono::steady_clock::now();
    while (ms_since(next_start) < 10000 && !raw.closed() && next.find('Z') == std::string::npos)
      next += raw.read_some(1s);
    auto messages = wire::parse_messages(next);
    CHECK_MESSAGE((messages.size() == 4 && messages[1].type == 'D' && contains(messages[1].body, "42") &&
                   messages[3].type == 'Z'),
                  wire::printable(next));
  }

  // Every attempt is started before any is polled. listen.max_client_connections is below the
  // burst, so both outcomes happen: a login, or 53300 "too many clients". None may hang.
  TEST_CASE("a burst of 2000 logins: each served or refused with 53300, a bystander keeps working") {
    PROXY_ONLY();
    const int attempts = env_int("SHARDWIRE_IT_BURST", 2000);
    const int max_clients = attempts * 3 / 4;
    raise_own_fd_limit(attempts);
    ProxyProcess p(shared_cluster());  // scram-sha-256
    restart_with_listen_key(p, "max_client_connections: " + std::to_string(max_clients));

    Bystander bystander(p.conninfo());
    sleep_ms(200);
    int before_burst = bystander.done();
    rb::ClientSwarm swarm(p.conninfo(), attempts);
    auto start = std::chrono::steady_clock::now();
    bool finished = swarm.run(/*max_in_flight=*/0, 120s);
    long long burst_ms = ms_since(start);
    int during_burst = bystander.done() - before_burst;
    // The logged-in clients are real sessions: each runs a query while the rest are still open.
    int answered = swarm.query_each("SELECT 1", 20s);
    bystander.stop();

    auto failures = swarm.failures_by_sqlstate();
    MESSAGE(attempts << " logins at once (max_client_connections " << max_clients << "): " << swarm.ok()
                     << " logged in, " << swarm.failed() << " refused, " << swarm.unfinished()
                     << " unfinished, in " << burst_ms << " ms (slowest attempt " << swarm.slowest_ms()
                     << " ms); bystander: " << bystander.done() << " queries (" << during_burst
                     << " during the burst), max latency " << bystander.max_ms() << " ms");
    std::string why = "failures: " + swarm.sample_errors() + "\n" + p.log_tail();
    CHECK_MESSAGE(finished, why);
    CHECK(swarm.unfinished() == 0);
    // The bystander holds one of the max_client_connections slots.
    CHECK_MESSAGE(swarm.ok() == max_clients - 1, why);
    CHECK_MESSAGE(failures.size() == 1, why);
    CHECK_MESSAGE(failures["53300"] == attempts - (max_clients - 1), why);
    CHECK(answered == swarm.ok());
    CHECK_MESSAGE(bystander.failed() == 0, bystander.first_failure());
    CHECK(during_burst >= 1);
    swarm.close_all();
    REQUIRE(p.running());
    // The slots come back once the burst's clients leave.
    CHECK(wait_until([&] { return connect(p.conninfo(), 5s).ok; }, 10s, 100ms));
  }

  // shardwire whose hard open file limit (1024) cannot hold listen.max_client_connections (5000)
  // says so at start and refuses the clients it has no descriptors for with 53300, instead of
  // failing accept() and leaving them hanging or cut off.
  TEST_CASE("an open file limit below max_client_connections: the excess is refused with 53300") {
    PROXY_ONLY();
    const int attempts = 1500;
    raise_own_fd_limit(attempts);
    rb::FdLimitedProxyBinary limited(1024);
    ProxyOptions o;
    o.auth_method = "md5";
    ProxyProcess p(shared_cluster(), o);
    restart_with_listen_key(p, "max_client_connections: 5000");
    CHECK(rb::max_open_files(p.pid()) == 1024);
    CHECK(p.wait_for_log("are refused with 53300", 5s));

    rb::ClientSwarm swarm(p.conninfo(), attempts);
    bool finished = swarm.run(/*max_in_flight=*/200, 120s);
    auto failures = swarm.failures_by_sqlstate();
    MESSAGE("hard open file limit 1024, max_client_connections 5000, "
            << attempts << " logins: " << swarm.ok() << " logged in, " << failures["53300"]
            << " refused with 53300, " << swarm.unfinished() << " unfinished");
    std::string why = "failures: " + swarm.sample_errors() + "\n" + p.log_tail();
    CHECK_MESSAGE(finished, why);
    CHECK(swarm.ok() >= 500);
    CHECK(swarm.ok() < 1024);
    CHECK_MESSAGE(failures.size() == 1, why);
    CHECK_MESSAGE(failures["53300"] == attempts - swarm.ok(), why);
    CHECK(swarm.query_each("SELECT 1", 20s) == swarm.ok());
    swarm.close_all();
    REQUIRE(p.running());
    CHECK(wait_until([&] { return connect(p.conninfo(), 5s).ok; }, 10s, 100ms));
  }

  // auth.login_timeout = 2 s. Each kind of stalled client is closed between 2 s and 2 s + a margin
  // after connecting, with 57014 "canceling authentication due to timeout" (a protocol error can be
  // sent at every stall point: the client has sent nothing, part of a startup packet, or is inside
  // the authentication exchange). Good clients log in and query all along.
  TEST_CASE("stalled logins (silent, slowloris, after startup, mid-SCRAM) time out, others are served") {
    PROXY_ONLY();
    const int per_kind = env_int("SHARDWIRE_IT_STALLED_PER_KIND", 100);
    constexpr long long kTimeoutMs = 2000, kMarginMs = 3000;
    raise_own_fd_limit(per_kind * 4);
    ProxyOptions o;
    o.login_timeout = "2s";
    ProxyProcess p(shared_cluster(), o);

    NewcomerLoop newcomers(p.conninfo());

    std::vector<rb::StalledClient> stalled;
    for (auto kind : {rb::StallKind::Silent, rb::StallKind::Slowloris, rb::StallKind::AfterStartup,
                      rb::StallKind::MidScram}) {
      auto opened = rb::open_stalled(p.port(), kind, per_kind);
      for (auto& c : opened) stalled.push_back(std::move(c));
    }
    rb::wait_until_closed(stalled, std::chrono::milliseconds(kTimeoutMs + kMarginMs + 2000));
    newcomers.stop();

    for (auto kind : {rb::StallKind::Silent, rb::StallKind::Slowloris, rb::StallKind::AfterStartup,
                      rb::StallKind::MidScram}) {
      int closed = 0, in_window = 0, with_57014 = 0;
      long long earliest = -1, latest = -1;
      std::string example;
      for (const auto& c : stalled) {
        if (c.kind != kind || !c.closed) continue;
        ++closed;
        if (earliest < 0 || c.closed_after_ms < earliest) earliest = c.closed_after_ms;
        latest = std::max(latest, c.closed_after_ms);
        if (c.closed_after_ms >= kTimeoutMs - 100 && c.closed_after_ms <= kTimeoutMs + kMarginMs) ++in_window;
        auto error = wire::find_error(c.received);
        if (error && error->sqlstate() == "57014" && error->severity() == "FATAL")
          ++with_57014;
        else if (example.empty())
          example = wire::printable(c.received);
      }
      MESSAGE(std::string(rb::stall_name(kind))
              << ": " << closed << "/" << per_kind << " closed after " << earliest << ".." << latest
              << " ms, " << with_57014 << " with FATAL 57014");
      CHECK_MESSAGE(closed == per_kind, p.log_tail());
      CHECK(in_window == per_kind);
      CHECK_MESSAGE(with_57014 == per_kind, "a client without FATAL 57014 received " << example);
    }
    MESSAGE("meanwhile " << newcomers.served() << " good clients logged in and queried, "
                         << newcomers.failed() << " failed");
    CHECK_MESSAGE(newcomers.failed() == 0, newcomers.first_failure());
    CHECK(newcomers.served() >= 1);
    CHECK(p.running());
  }

}  // TEST_SUITE
