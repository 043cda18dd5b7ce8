// TlsSession server <-> client entirely in memory, with a self-signed certificate made at test time.
#include "net/tls.h"

#include <doctest/doctest.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <malloc.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

using namespace sw;
using namespace sw::net;

namespace {

// A temp directory with cert.pem / key.pem for CN=localhost (SAN DNS:localhost, IP:127.0.0.1)
// and other_key.pem (a key matching nothing). Removed at exit.
class CertDir {
 public:
  CertDir() {
    char tmpl[] = "/tmp/sw_tls_test_XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    dir_ = tmpl;
    EVP_PKEY* key = EVP_EC_gen("P-256");
    REQUIRE(key != nullptr);
    X509* cert = X509_new();
    X509_set_version(cert, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
    X509_gmtime_adj(X509_getm_notBefore(cert), -60);
    X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
    X509_set_pubkey(cert, key);
    X509_NAME* name = X509_get_subject_name(cert);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("localhost"),
                               -1, -1, 0);
    X509_set_issuer_name(cert, name);
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
    for (auto [nid, value] : {std::pair{NID_subject_alt_name, "DNS:localhost,IP:127.0.0.1"},
                              std::pair{NID_basic_constraints, "critical,CA:TRUE"}}) {
      X509_EXTENSION* ext = X509V3_EXT_nconf_nid(nullptr, &ctx, nid, value);
      REQUIRE(ext != nullptr);
      X509_add_ext(cert, ext, -1);
      X509_EXTENSION_free(ext);
    }
    REQUIRE(X509_sign(cert, key, EVP_sha256()) > 0);
    write_pem(cert_file(), [&](FILE* f) { return PEM_write_X509(f, cert); });
    write_pem(key_file(),
              [&](FILE* f) { return PEM_write_PrivateKey(f, key, nullptr, nullptr, 0, nullptr, nullptr); });
    EVP_PKEY* other = EVP_EC_gen("P-256");
    write_pem(other_key_file(),
              [&](FILE* f) { return PEM_write_PrivateKey(f, other, nullptr, nullptr, 0, nullptr, nullptr); });
    write_file(garbage_file(), "not a certificate\n");
    EVP_PKEY_free(other);
    X509_free(cert);
    EVP_PKEY_free(key);
  }
  ~CertDir() { std::filesystem::remove_all(dir_); }

  std::string cert_file() const { return dir_ + "/cert.pem"; }
  std::string key_file() const { return dir_ + "/key.pem"; }
  std::string other_key_file() const { return dir_ + "/other_key.pem"; }
  std::string garbage_file() const { return dir_ + "/garbage.pem"; }

 private:
  template <typename Writer>
  static void write_pem(const std::string& path, Writer writer) {
    FILE* f = fopen(path.c_str(), "w");
    REQUIRE(f != nullptr);
    CHECK(writer(f) == 1);
    fclose(f);
  }
  static void write_file(const std::string& path, const std::string& text) {
    FILE* f = fopen(path.c_str(), "w");
    REQUIRE(f != nullptr);
    fwrite(text.data(), 1, text.size(), f);
    fclose(f);
  }
  std::string dir_;
};

const CertDir& certs() {
  static CertDir dir;
  return dir;
}

std::shared_ptr<TlsContext> server_context() {
  auto result = TlsContext::make_server(certs().cert_file(), certs().key_file());
  REQUIRE(result.is_ok());
  return *result;
}

std::shared_ptr<TlsContext> client_context(bool verify, const std::string& root = {}) {
  auto result = TlsContext::make_client(verify, root);
  REQUIRE(result.is_ok());
  return *result;
}

// Both sides of one connection; ciphertext is moved by shuttle().
struct Pair {
  TlsSession client;
  TlsSession server;
  std::string client_received;
  std::string server_received;
  Status client_status;
  Status server_status;

  Pair(std::shared_ptr<TlsContext> client_ctx, std::shared_ptr<TlsContext> server_ctx,
       const std::string& host = "localhost")
      : client(std::move(client_ctx), host), server(std::move(server_ctx)) {}

  // Moves bytes both ways until nothing is left to send or a side fails. `piece` > 0 delivers
  // ciphertext in pieces of that size.
  void shuttle(size_t piece = 0) {
    for (int round = 0; round < 1000; ++round) {
      std::string to_server = client.take_ciphertext();
      std::string to_client = server.take_ciphertext();
      if (to_server.empty() && to_client.empty()) return;
      deliver(server, to_server, server_received, server_status, piece);
      deliver(client, to_client, client_received, client_status, piece);
      if (!client_status.is_ok() || !server_status.is_ok()) return;
    }
    FAIL("shuttle did not settle");
  }

  bool handshake(size_t piece = 0) {
    client_status = client.start_handshake();
    if (!client_status.is_ok()) return false;
    shuttle(piece);
    return client_status.is_ok() && server_status.is_ok() && client.handshake_done() &&
           server.handshake_done();
  }

 private:
  static void deliver(TlsSession& to, const std::string& bytes, std::string& received, Status& status,
                      size_t piece) {
    if (bytes.empty() || !status.is_ok()) return;
    size_t step = piece == 0 ? bytes.size() : piece;
    for (size_t i = 0; i < bytes.size() && status.is_ok(); i += step) {
      status = to.on_ciphertext(std::string_view(bytes).substr(i, step), received);
    }
  }
};

std::string payload(size_t size) {
  std::string data(size, '\0');
  uint32_t x = 12345;
  for (char& c : data) c = static_cast<char>((x = x * 1103515245 + 12345) >> 24);
  return data;
}

}  // namespace

TEST_CASE("TLS: handshake and data both ways, including 1 MiB") {
  Pair pair(client_context(false), server_context());
  REQUIRE(pair.handshake());

  REQUIRE(pair.client.write_plaintext("SELECT 1").is_ok());
  pair.shuttle();
  CHECK(pair.server_received == "SELECT 1");
  REQUIRE(pair.server.write_plaintext("one row").is_ok());
  pair.shuttle();
  CHECK(pair.client_received == "one row");

  std::string big = payload(1 << 20);
  REQUIRE(pair.client.write_plaintext(big).is_ok());
  REQUIRE(pair.server.write_plaintext(big).is_ok());
  pair.shuttle();
  REQUIRE(pair.server_status.is_ok());
  REQUIRE(pair.client_status.is_ok());
  CHECK(pair.server_received == "SELECT 1" + big);
  CHECK(pair.client_received == "one row" + big);
}

// Memory BIOs keep the largest size they held; drained ones are replaced, so a session that
// carried 1 MiB each way and went idle holds about what it held before.
TEST_CASE("TLS: an idle session does not keep buffers grown for a large message") {
  Pair pair(client_context(false), server_context());
  REQUIRE(pair.handshake());
  REQUIRE(pair.client.write_plaintext("SELECT 1").is_ok());
  pair.shuttle();
  std::string().swap(pair.server_received);
  // Heap in use: small chunks plus mmap()ed large ones.
  auto in_use = [] { return mallinfo2().uordblks + mallinfo2().hblkhd; };
  size_t before = in_use();

  std::string big = payload(1 << 20);
  REQUIRE(pair.client.write_plaintext(big).is_ok());
  REQUIRE(pair.server.write_plaintext(big).is_ok());
  pair.shuttle();
  CHECK(pair.server_received == big);
  CHECK(pair.client_received == big);
  std::string().swap(pair.server_received);
  std::string().swap(pair.client_received);
  std::string().swap(big);
  size_t after = in_use();
  CHECK(after < before + 64 * 1024);

  // Still one session: the next messages go through the fresh buffers.
  REQUIRE(pair.server.write_plaintext("after").is_ok());
  REQUIRE(pair.client.write_plaintext("again").is_ok());
  pair.shuttle();
  CHECK(pair.client_received == "after");
  CHECK(pair.server_received == "again");
}

TEST_CASE("TLS: ciphertext delivered one byte at a time") {
  Pair pair(client_context(false), server_context());
  REQUIRE(pair.handshake(/*piece=*/1));
  REQUIRE(pair.client.write_plaintext(payload(5000)).is_ok());
  pair.shuttle(/*piece=*/7);
  CHECK(pair.server_received == payload(5000));
}

TEST_CASE("TLS: plaintext written before the handshake is flushed once it is done") {
  Pair pair(client_context(false), server_context());
  REQUIRE(pair.client.write_plaintext("early from client").is_ok());
  REQUIRE(pair.server.write_plaintext("early from server").is_ok());
  CHECK(pair.server.take_ciphertext().empty());  // nothing before a ClientHello
  REQUIRE(pair.handshake());
  pair.shuttle();
  CHECK(pair.server_received == "early from client");
  CHECK(pair.client_received == "early from server");
}

TEST_CASE("TLS: garbage ciphertext is an 08P01 fault of the peer") {
  {
    TlsSession server(server_context());
    std::string plain;
    Status status = server.on_ciphertext("GET / HTTP/1.1\r\nHost: x\r\n\r\n", plain);
    CHECK(status.fault == Fault::Client);
    CHECK(status.sqlstate == "08P01");
    CHECK(status.message.find("TLS handshake failed") != std::string::npos);
    CHECK(plain.empty());
    CHECK_FALSE(server.on_ciphertext("more", plain).is_ok());  // sticky
    CHECK_FALSE(server.write_plaintext("x").is_ok());
  }
  {
    TlsSession client(client_context(false), "localhost");
    REQUIRE(client.start_handshake().is_ok());
    CHECK_FALSE(client.take_ciphertext().empty());  // the ClientHello
    std::string plain;
    Status status = client.on_ciphertext(std::string(64, '\x16'), plain);
    CHECK(status.fault == Fault::Server);
    CHECK(status.sqlstate == "08P01");
  }
  {  // A corrupted record after the handshake.
    Pair pair(client_context(false), server_context());
    REQUIRE(pair.handshake());
    REQUIRE(pair.client.write_plaintext("secret data").is_ok());
    std::string record = pair.client.take_ciphertext();
    REQUIRE(record.size() > 10);
    record[record.size() - 3] ^= 0x40;
    std::string plain;
    Status status = pair.server.on_ciphertext(record, plain);
    CHECK(status.fault == Fault::Client);
    CHECK(status.sqlstate == "08P01");
    CHECK(plain.empty());
    CHECK_FALSE(pair.server.take_ciphertext().empty());  // the alert for the peer
  }
}

TEST_CASE("TLS: server context errors are config faults naming the file") {
  auto missing = TlsContext::make_server("/nonexistent/sw/cert.pem", certs().key_file());
  REQUIRE_FALSE(missing.is_ok());
  CHECK(missing.status().fault == Fault::Config);
  CHECK(missing.status().message.find("/nonexistent/sw/cert.pem") != std::string::npos);
  CHECK(missing.status().message.find("No such file") != std::string::npos);

  auto missing_key = TlsContext::make_server(certs().cert_file(), "/nonexistent/sw/key.pem");
  REQUIRE_FALSE(missing_key.is_ok());
  CHECK(missing_key.status().fault == Fault::Config);
  CHECK(missing_key.status().message.find("/nonexistent/sw/key.pem") != std::string::npos);

  auto garbage = TlsContext::make_server(certs().garbage_file(), certs().key_file());
  REQUIRE_FALSE(garbage.is_ok());
  CHECK(garbage.status().message.find(certs().garbage_file()) != std::string::npos);

  auto mismatch = TlsContext::make_server(certs().cert_file(), certs().other_key_file());
  REQUIRE_FALSE(mismatch.is_ok());
  CHECK(mismatch.status().fault == Fault::Config);
  CHECK(mismatch.status().message.find(certs().other_key_file()) != std::string::npos);

  auto root = TlsContext::make_client(true, "/nonexistent/sw/root.crt");
  REQUIRE_FALSE(root.is_ok());
  CHECK(root.status().fault == Fault::Config);
  CHECK(root.status().message.find("/nonexistent/sw/root.crt") != std::string::npos);
}

TEST_CASE("TLS: verify-full checks the chain and the host name") {
  auto verifying = client_context(true, certs().cert_file());
  CHECK(verifying->verifies_peer());
  {
    Pair pair(verifying, server_context(), "localhost");
    CHECK(pair.handshake());
  }
  {
    Pair pair(verifying, server_context(), "127.0.0.1");
    CHECK(pair.handshake());
  }
  {
    Pair pair(verifying, server_context(), "db.example.com");
    CHECK_FALSE(pair.handshake());
    CHECK(pair.client_status.fault == Fault::Server);
    CHECK(pair.client_status.message.find("hostname mismatch") != std::string::npos);
  }
  {
    Pair pair(verifying, server_context(), "127.0.0.2");
    CHECK_FALSE(pair.handshake());
  }
  {  // Self-signed and not in the trusted roots.
    Pair pair(client_context(true), server_context(), "localhost");
    CHECK_FALSE(pair.handshake());
    CHECK(pair.client_status.fault == Fault::Server);
  }
  {  // verify-full without a host name cannot be satisfied.
    TlsSession client(verifying, "");
    CHECK(client.start_handshake().fault == Fault::Config);
  }
}

TEST_CASE("TLS: versions below 1.2 are refused by the server") {
  auto old_client = client_context(false);
  SSL_CTX_set_security_level(old_client->raw(), 0);
  SSL_CTX_set_min_proto_version(old_client->raw(), TLS1_VERSION);
  SSL_CTX_set_max_proto_version(old_client->raw(), TLS1_1_VERSION);
  Pair pair(old_client, server_context());
  CHECK_FALSE(pair.handshake());
  CHECK(pair.server_status.fault == Fault::Client);
  CHECK(pair.server_status.message.find("unsupported protocol") != std::string::npos);
  CHECK_FALSE(pair.server.handshake_done());
}
