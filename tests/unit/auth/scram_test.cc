// SCRAM-SHA-256 against RFC 7677, an independent reference computation, and each other.
#include "auth/scram.h"

#include <doctest/doctest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "auth/base64.h"
#include "scram_test_util.h"

using namespace sw;
using namespace sw::auth;
using namespace scram_test;

TEST_CASE("RFC 7677 vector: make_scram_secret derives the RFC 5802 keys") {
  ScramSecret secret = rfc_secret();
  std::string salt = *base64_decode(kSaltB64);
  std::string salted = ref_salted_password("pencil", salt, 4096);
  CHECK(secret.iterations == 4096);
  CHECK(secret.salt == salt);
  CHECK(secret.stored_key == ref_sha256(ref_hmac(salted, "Client Key")));
  CHECK(secret.server_key == ref_hmac(salted, "Server Key"));
}

TEST_CASE("RFC 7677 vector: ScramServer accepts the RFC proof and sends the RFC signature") {
  ScramSecret secret = rfc_secret();
  ScramServer server(&secret, "unused", kServerNonce);
  auto server_first = server.on_client_first(kClientFirst);
  REQUIRE(server_first.is_ok());
  CHECK(*server_first == kServerFirst);
  auto server_final = server.on_client_final(kClientFinal);
  REQUIRE(server_final.is_ok());
  CHECK(*server_final == kServerFinal);
}

TEST_CASE("RFC 7677 vector: ScramClient computes the proof for its (empty-user) AuthMessage") {
  ScramClient client("pencil", kClientNonce);
  CHECK(client.client_first() == "n,,n=,r=" + kClientNonce);
  auto client_final = client.on_server_first(kServerFirst);
  REQUIRE(client_final.is_ok());

  // libpq sends "n=" (PostgreSQL ignores the SCRAM user name), so the AuthMessage is the RFC's
  // with an empty user, and the proof is computed independently here.
  std::string nonce = kClientNonce + kServerNonce;
  std::string final_without_proof = "c=biws,r=" + nonce;
  std::string auth_message = "n=,r=" + kClientNonce + "," + kServerFirst + "," + final_without_proof;
  std::string salted = ref_salted_password("pencil", *base64_decode(kSaltB64), 4096);
  std::string client_key = ref_hmac(salted, "Client Key");
  std::string proof = ref_xor(client_key, ref_hmac(ref_sha256(client_key), auth_message));
  CHECK(*client_final == final_without_proof + ",p=" + base64_encode(proof));

  std::string signature = ref_hmac(ref_hmac(salted, "Server Key"), auth_message);
  CHECK(client.on_server_final("v=" + base64_encode(signature)).is_ok());
}

TEST_CASE("RFC 7677 vector: ScramClient against ScramServer with the RFC salt and nonces") {
  ScramSecret secret = rfc_secret();
  ScramServer server(&secret, "unused", kServerNonce);
  ScramClient client("pencil", kClientNonce);
  auto server_first = server.on_client_first(client.client_first());
  REQUIRE(server_first.is_ok());
  CHECK(*server_first == kServerFirst);
  auto client_final = client.on_server_first(*server_first);
  REQUIRE(client_final.is_ok());
  auto server_final = server.on_client_final(*client_final);
  REQUIRE(server_final.is_ok());
  CHECK(client.on_server_final(*server_final).is_ok());
}

TEST_CASE("round trip with random nonces and salt") {
  std::string salt(16, '\0');
  random_bytes(salt.data(), salt.size());
  ScramSecret secret = make_scram_secret("correct horse battery staple", salt, 4096);
  for (int i = 0; i < 3; ++i) {  // the second and third client hit the SaltedPassword cache
    ScramServer server(&secret, "unused", random_nonce());
    ScramClient client("correct horse battery staple", random_nonce());
    CHECK(run_exchange(client, server).is_ok());
  }
  // Default nonces (empty argument) are generated.
  ScramServer server(&secret, "unused", "");
  ScramClient client("correct horse battery staple", "");
  CHECK(run_exchange(client, server).is_ok());
}

TEST_CASE("ScramClient: the SaltedPassword cache is correct under concurrency and eviction") {
  // 4 threads x 40 exchanges over 80 (password, salt) pairs: more than the cache holds, with
  // the same salt under two passwords so a wrong password must never hit a right one's entry.
  std::vector<ScramSecret> secrets;
  for (int i = 0; i < 40; ++i) {
    secrets.push_back(make_scram_secret("pw" + std::to_string(i), "salt" + std::to_string(i), 4096));
  }
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 40; ++i) {
        int k = (i * 7 + t * 13) % 40;
        bool right = (i + t) % 2 == 0;
        ScramServer server(&secrets[k], "unused", random_nonce());
        ScramClient client(right ? "pw" + std::to_string(k) : "wrong" + std::to_string(k), random_nonce());
        if (scram_test::run_exchange(client, server).is_ok() != right) failures++;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  CHECK(failures.load() == 0);
}

TEST_CASE("random_nonce: printable, unique, PostgreSQL's length") {
  std::string a = random_nonce();
  std::string b = random_nonce();
  CHECK(a.size() == 24);  // 18 random bytes, like PostgreSQL's SCRAM_RAW_NONCE_LEN
  CHECK(a != b);
  for (char c : a) CHECK((c > 0x20 && c < 0x7F && c != ',' && c != '='));
  CHECK(random_nonce(16).find('=') == std::string::npos);
}

TEST_CASE("a wrong password fails with 28P01 on the server side") {
  std::string salt = "0123456789abcdef";
  ScramSecret secret = make_scram_secret("right", salt, 4096);
  {
    ScramServer server(&secret, "unused", random_nonce());
    ScramClient client("right", random_nonce());  // fills the cache for this salt
    CHECK(run_exchange(client, server).is_ok());
  }
  ScramServer server(&secret, "unused", random_nonce());
  ScramClient client("wrong", random_nonce());
  Status status = run_exchange(client, server);
  CHECK(status.fault == Fault::Client);
  CHECK(status.sqlstate == "28P01");
  CHECK(status.message == "password authentication failed");
  // The exchange is over: nothing more is accepted.
  CHECK_FALSE(server.on_client_final("c=biws,r=x,p=" + base64_encode(std::string(32, 'x'))).is_ok());
}

TEST_CASE("mock exchange: deterministic fake salt, fails exactly like a wrong password") {
  std::string seed = "alice\x01per-process-secret";
  ScramServer mock(nullptr, seed, "servernonce");
  auto first = mock.on_client_first("n,,n=,r=clientnonce");
  REQUIRE(first.is_ok());
  std::string expected_salt = ref_sha256(seed).substr(0, 16);
  CHECK(*first == "r=clientnonceservernonce,s=" + base64_encode(expected_salt) + ",i=4096");

  ScramServer again(nullptr, seed, "servernonce");
  CHECK(*again.on_client_first("n,,n=,r=clientnonce") == *first);
  ScramServer other(nullptr, "bob\x01per-process-secret", "servernonce");
  CHECK(*other.on_client_first("n,,n=,r=clientnonce") != *first);

  // Any password, even one matching nothing, fails at the final step with the 28P01 status a
  // wrong password gets.
  std::string salt(16, 's');
  ScramSecret secret = make_scram_secret("right", salt, 4096);
  ScramServer real(&secret, "unused", random_nonce());
  ScramClient wrong("wrong", random_nonce());
  Status wrong_status = run_exchange(wrong, real);

  for (const char* password : {"", "right", "wrong"}) {
    ScramServer mock_server(nullptr, seed, random_nonce());
    ScramClient client(password, random_nonce());
    Status status = run_exchange(client, mock_server);
    CHECK(status.fault == wrong_status.fault);
    CHECK(status.sqlstate == wrong_status.sqlstate);
    CHECK(status.message == wrong_status.message);
  }
}

TEST_CASE("ScramClient: iteration count must be 1..kMaxIterations") {
  auto server_first = [](const std::string& iterations) {
    return "r=" + kClientNonce + "srv,s=" + kSaltB64 + ",i=" + iterations;
  };
  auto attempt = [](const std::string& message) {
    ScramClient client("pencil", kClientNonce);
    return client.on_server_first(message);
  };
  CHECK(attempt(server_first("1")).is_ok());
  CHECK(attempt(server_first(std::to_string(ScramClient::kMaxIterations))).is_ok());
  for (const std::string& too_many :
       {std::to_string(ScramClient::kMaxIterations + 1), std::string("4294967296"),
        std::string("99999999999999999999999999999")}) {
    auto result = attempt(server_first(too_many));
    REQUIRE_FALSE(result.is_ok());
    CHECK(result.status().fault == Fault::Server);
    CHECK(result.status().sqlstate == "28000");
    CHECK(result.status().message.find("iterations") != std::string::npos);
  }
  for (const char* malformed : {"0", "-1", "+4096", "04096", "", " 4096", "4096 ", "4e3", "0x10"}) {
    CAPTURE(malformed);
    auto result = attempt(server_first(malformed));
    REQUIRE_FALSE(result.is_ok());
    CHECK(result.status().fault == Fault::Server);
    CHECK(result.status().sqlstate == "08P01");
  }
}

TEST_CASE("ScramClient: the server nonce must extend the client nonce, within kMaxNonceLength") {
  auto attempt = [](const std::string& nonce) {
    ScramClient client("pencil", kClientNonce);
    return client.on_server_first("r=" + nonce + ",s=" + kSaltB64 + ",i=4096");
  };
  CHECK(attempt(kClientNonce + "x").is_ok());
  CHECK(attempt(kClientNonce + std::string(ScramClient::kMaxNonceLength - kClientNonce.size(), 'x')).is_ok());
  const std::string bad[] = {
      kClientNonce,                                                   // no server part
      kClientNonce.substr(1) + "xx",                                  // does not start with the client nonce
      "x" + kClientNonce,                                             //
      kClientNonce.substr(0, 5),                                      // shorter
      kClientNonce + std::string(ScramClient::kMaxNonceLength, 'x'),  // too long
      kClientNonce + " x",                                            // not printable
      kClientNonce + "\x7f",                                          //
      kClientNonce + "\xc3\xa9",                                      //
      "",
  };
  for (const std::string& nonce : bad) {
    CAPTURE(nonce);
    auto result = attempt(nonce);
    REQUIRE_FALSE(result.is_ok());
    CHECK(result.status().fault == Fault::Server);
    CHECK(result.status().sqlstate == "08P01");
  }
}

TEST_CASE("ScramClient: server signature, server errors and message order") {
  ScramSecret secret = rfc_secret();
  {
    ScramServer server(&secret, "unused", kServerNonce);
    ScramClient client("pencil", kClientNonce);
    auto first = server.on_client_first(client.client_first());
    auto final_message = client.on_server_first(*first);
    REQUIRE(final_message.is_ok());
    Status status = client.on_server_final(kServerFinal);  // valid, but for another AuthMessage
    CHECK(status.fault == Fault::Server);
    CHECK(status.sqlstate == "28000");
    CHECK(status.message.find("server signature") != std::string::npos);
  }
  {
    ScramClient client("pencil", kClientNonce);
    REQUIRE(client.on_server_first(kServerFirst).is_ok());
    Status status = client.on_server_final("e=invalid-proof\x01");
    CHECK(status.fault == Fault::Server);
    CHECK(status.sqlstate == "28000");
    CHECK(status.message.find("invalid-proof?") != std::string::npos);
  }
  {
    ScramClient client("pencil", kClientNonce);
    CHECK(client.on_server_final(kServerFinal).sqlstate == "08P01");  // before server-first
    CHECK_FALSE(client.on_server_first(kServerFirst).is_ok());        // the exchange is over
  }
  {
    ScramClient client("pencil", kClientNonce);
    REQUIRE(client.on_server_first(kServerFirst).is_ok());
    CHECK_FALSE(client.on_server_first(kServerFirst).is_ok());  // twice
  }
}

TEST_CASE("parse_scram_secret") {
  ScramSecret secret = rfc_secret();
  std::string text = "SCRAM-SHA-256$4096:" + kSaltB64 + "$" + base64_encode(secret.stored_key) + ":" +
                     base64_encode(secret.server_key);
  auto parsed = parse_scram_secret(text);
  REQUIRE(parsed.is_ok());
  CHECK(parsed->iterations == 4096);
  CHECK(parsed->salt == secret.salt);
  CHECK(parsed->stored_key == secret.stored_key);
  CHECK(parsed->server_key == secret.server_key);

  std::string key = base64_encode(secret.stored_key);
  const std::string bad[] = {
      "",
      "md5" + std::string(32, 'a'),
      "SCRAM-SHA-1$4096:" + kSaltB64 + "$" + key + ":" + key,
      "SCRAM-SHA-256$0:" + kSaltB64 + "$" + key + ":" + key,
      "SCRAM-SHA-256$-1:" + kSaltB64 + "$" + key + ":" + key,
      "SCRAM-SHA-256$x:" + kSaltB64 + "$" + key + ":" + key,
      "SCRAM-SHA-256$2147483648:" + kSaltB64 + "$" + key + ":" + key,
      "SCRAM-SHA-256$4096:$" + key + ":" + key,
      "SCRAM-SHA-256$4096:!!!!$" + key + ":" + key,
      "SCRAM-SHA-256$4096" + kSaltB64 + "$" + key + ":" + key,
      "SCRAM-SHA-256$4096:" + kSaltB64 + "$" + key + key,
      "SCRAM-SHA-256$4096:" + kSaltB64 + "$" + key + ":" + base64_encode("short"),
      "SCRAM-SHA-256$4096:" + kSaltB64 + "$" + key + ":" + key + "$",
      "SCRAM-SHA-256$4096:" + kSaltB64 + "$" + key + ":" + key + ":",
  };
  for (const std::string& candidate : bad) {
    CAPTURE(candidate);
    auto result = parse_scram_secret(candidate);
    REQUIRE_FALSE(result.is_ok());
    CHECK(result.status().fault == Fault::Config);
    CHECK(result.status().message.find(key) == std::string::npos);  // never echoes the verifier
  }
}
