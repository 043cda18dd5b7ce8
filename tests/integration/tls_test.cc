// TLS on the client side of shardwire: psql with sslmode=require through a TLS-configured proxy,
// the server-does-not-support-SSL refusal without it, the raw S/N answers, and bytes smuggled
// after an SSLRequest (CVE-2021-23214 class).
#include "it_test.h"

using namespace it;

namespace {

struct Cert {
  TempDir dir{"shardwire-tls-"};
  std::string cert = dir.file("server.crt");
  std::string key = dir.file("server.key");
  Cert() {
    CommandResult r = run_command(
        {"openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-addext",
         "subjectAltName=DNS:localhost,IP:127.0.0.1", "-days", "1", "-keyout", key, "-out", cert},
        "", 60s);
    INFO("openssl: " << r.describe());
    REQUIRE(r.exit_code == 0);
  }
};

ProxyOptions tls_options(const Cert& c) {
  ProxyOptions o;
  o.tls_cert_file = c.cert;
  o.tls_key_file = c.key;
  return o;
}

}  // namespace

TEST_SUITE("tls") {
  TEST_CASE("psql with sslmode=require through a TLS-configured proxy") {
    PROXY_ONLY();
    Cert cert;
    ProxyProcess p(shared_cluster(), tls_options(cert));
    INFO("proxy log:\n" << p.log_tail());
    CommandResult r = run_command({psql(), "-X", "-At", "-d", p.conninfo("app", "secret", "sslmode=require"),
                                   "-c", "SELECT 'tls-ok'", "-c", "\\conninfo"},
                                  "", 60s);
    INFO("psql: " << r.describe());
    CHECK(r.exit_code == 0);
    CHECK(contains(r.out, "tls-ok"));
    CHECK(contains(r.out, "SSL connection (protocol: TLSv1."));

    // libpq: TLS in use, the certificate verifies against itself for the name localhost.
    ConnectResult c =
        connect("host=localhost hostaddr=127.0.0.1 port=" + std::to_string(p.port()) +
                " dbname=app user=app password=secret sslmode=verify-full sslrootcert=" + cert.cert);
    REQUIRE_MESSAGE(c.ok, c.error);
    CHECK(PQsslInUse(c.conn.get()) == 1);
    CHECK(std::string(PQsslAttribute(c.conn.get(), "protocol")).rfind("TLSv1.", 0) == 0);
    // Large traffic both ways over TLS.
    std::string big(2 * 1024 * 1024, 't');
    CHECK(c.conn.value("SELECT length('" + big + "')", 60s) == std::to_string(big.size()));
    PgResult many = c.conn.exec("SELECT g, repeat('z', 200) FROM generate_series(1, 50000) g", 60s);
    REQUIRE_MESSAGE(many.ok(), many.describe());
    CHECK(many.rows() == 50000);
    for (int i = 0; i < 20; ++i) {
      ConnectResult n = connect(p.conninfo("app", "secret", "sslmode=require"));
      REQUIRE_MESSAGE(n.ok, n.error);
      CHECK(n.conn.value("SELECT " + std::to_string(i)) == std::to_string(i));
    }
    ConnectResult wrong = connect(p.conninfo("app", "wrong", "sslmode=require"));
    CHECK_FALSE(wrong.ok);
    CHECK(wrong.sqlstate == "28P01");
  }

  TEST_CASE("sslmode=require without TLS configured: server does not support SSL") {
    Target t(shared_cluster());
    INFO("proxy log:\n" << t.log_tail());
    CommandResult r = run_command({psql(), "-X", "-At", "-d", t.conninfo("app", "secret", "sslmode=require"),
                                   "-c", "SELECT 'must-not-run'"},
                                  "", 60s);
    INFO("psql: " << r.describe());
    CHECK(r.exit_code != 0);
    CHECK_FALSE(contains(r.out, "must-not-run"));
    CHECK(contains(r.err, "server does not support SSL, but SSL was required"));
    ConnectResult plain = t.connect("sslmode=prefer");
    REQUIRE_MESSAGE(plain.ok, plain.error);
    CHECK(PQsslInUse(plain.conn.get()) == 0);
  }

  TEST_CASE("raw SSLRequest: S with TLS configured, N without (and the login continues in plaintext)") {
    {
      Target t(shared_cluster());
      RawSocket s(t.port());
      REQUIRE(s.send_all(wire::ssl_request()));
      CHECK(s.read_exact(1, 5s) == "N");
      REQUIRE(s.send_all(wire::startup_message({{"user", "app"}, {"database", t.dbname()}})));
      std::string got = s.read_some(5s);
      REQUIRE_MESSAGE(!got.empty(), "no reply to the StartupMessage after N");
      CHECK(got[0] == 'R');
    }
    if (direct_mode()) return;
    Cert cert;
    ProxyProcess p(shared_cluster(), tls_options(cert));
    INFO("proxy log:\n" << p.log_tail());
    RawSocket s(p.port());
    REQUIRE(s.send_all(wire::ssl_request()));
    CHECK(s.read_exact(1, 5s) == "S");
  }

  TEST_CASE("bytes in the same packet right after an SSLRequest: 08P01 and close") {
    auto smuggle = [](int port) {
      RawSocket s(port);
      REQUIRE(
          s.send_all(wire::ssl_request() + wire::startup_message({{"user", "app"}, {"database", "app"}})));
      expect_error_and_close(s, "SSLRequest followed by a StartupMessage in one packet", true, "08P01", true);
    };
    {
      Target t(shared_cluster());
      smuggle(t.port());
      ConnectResult ok = t.connect();
      CHECK_MESSAGE(ok.ok, ok.error);
    }
    if (direct_mode()) return;
    Cert cert;
    ProxyProcess p(shared_cluster(), tls_options(cert));
    INFO("proxy log:\n" << p.log_tail());
    PgConn bystander = connect_or_throw(p.conninfo("app", "secret", "sslmode=require"));
    smuggle(p.port());
    CHECK(bystander.value("SELECT 'bystander-ok'") == "bystander-ok");
    ConnectResult ok = connect(p.conninfo("app", "secret", "sslmode=require"));
    CHECK_MESSAGE(ok.ok, ok.error);
  }

  TEST_CASE("garbage instead of a TLS handshake is dropped; others carry on") {
    PROXY_ONLY();
    Cert cert;
    ProxyProcess p(shared_cluster(), tls_options(cert));
    INFO("proxy log:\n" << p.log_tail());
    PgConn bystander = connect_or_throw(p.conninfo("app", "secret", "sslmode=require"));
    for (int i = 0; i < 10; ++i) {
      RawSocket s(p.port());
      REQUIRE(s.send_all(wire::ssl_request()));
      REQUIRE(s.read_exact(1, 5s) == "S");
      // Some of these bytes look like the start of a long TLS record; the EOF ends the wait for it.
      s.send_all(std::string(300, static_cast<char>(i * 17 + 3)));
      s.shutdown_write();
      s.read_until_closed(10s);
      CHECK(s.closed());
    }
    CHECK(bystander.value("SELECT 'still-here'") == "still-here");
    ConnectResult ok = connect(p.conninfo("app", "secret", "sslmode=require"));
    CHECK_MESSAGE(ok.ok, ok.error);
  }

}  // TEST_SUITE
