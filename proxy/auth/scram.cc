// The SCRAM-SHA-256 exchanges (RFC 5802 / RFC 7677) with PostgreSQL's rules: ScramServer follows
// src/backend/libpq/auth-scram.c, ScramClient follows libpq's fe-auth-scram.c. Parsing is
// stricter than PostgreSQL where PostgreSQL is lax (trailing commas, empty nonces, non-canonical
// base64, leading zeros); no well-formed message from libpq or a PostgreSQL server is refused.
#include "auth/scram.h"

#include "auth/base64.h"
#include "auth/md5.h"
#include "auth/scram_internal.h"

namespace sw::auth {
namespace detail {

bool is_printable_nonce(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < 0x21 || c > 0x7E || c == ',') return false;
  }
  return true;
}

std::optional<uint64_t> parse_posit_number(std::string_view s, uint64_t limit) {
  if (s.empty() || s[0] < '1' || s[0] > '9') return std::nullopt;
  uint64_t value = 0;
  bool over = false;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    if (!over) {
      value = value * 10 + static_cast<uint64_t>(c - '0');
      over = value > limit;  // limit is far below UINT64_MAX / 10 in every use
    }
  }
  return over ? limit + 1 : value;
}

std::optional<std::pair<char, std::string_view>> AttributeReader::next() {
  if (pos_ + 2 > message_.size()) return std::nullopt;
  char name = message_[pos_];
  bool alpha = (name >= 'a' && name <= 'z') || (name >= 'A' && name <= 'Z');
  if (!alpha || message_[pos_ + 1] != '=') return std::nullopt;
  size_t start = pos_ + 2;
  size_t end = message_.find(',', start);
  if (end == std::string_view::npos) end = message_.size();
  std::string_view value = message_.substr(start, end - start);
  dangling_comma_ = end < message_.size() && end + 1 == message_.size();
  pos_ = end < message_.size() ? end + 1 : end;
  return std::make_pair(name, value);
}

std::optional<std::string_view> AttributeReader::expect(char name) {
  if (pos_ >= message_.size() || message_[pos_] != name) return std::nullopt;
  auto attr = next();
  if (!attr) return std::nullopt;
  return attr->second;
}

}  // namespace detail

using detail::AttributeReader;

namespace {

constexpr uint32_t kMockIterations = 4096;  // PostgreSQL's default scram_iterations
constexpr size_t kMockSaltLength = 16;      // PostgreSQL's SCRAM_DEFAULT_SALT_LEN

Status client_malformed(const std::string& detail) {
  return Status::client("08P01", "malformed SCRAM message: " + detail);
}

Status server_malformed(const std::string& detail) {
  return Status::server("08P01", "malformed SCRAM message from server: " + detail);
}

Status authentication_failed() { return Status::client("28P01", "password authentication failed"); }

// Printable ASCII of a server-provided error value, bounded, for a log-safe message.
std::string sanitize(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, 100)) out.push_back(c >= 0x20 && c <= 0x7E ? c : '?');
  return out;
}

}  // namespace

// A null secret gives the mock exchange: salt = SHA-256(fake_salt_seed)[0..16), 4096 iterations,
// and keys derived from the seed so the final step costs the same work as a real one. The seed
// should mix the user name with a per-process secret, as PostgreSQL's mock salt does.
// An empty server_nonce is replaced by a fresh random_nonce().
ScramServer::ScramServer(const ScramSecret* secret, std::string_view fake_salt_seed, std::string server_nonce)
    : mock_(secret == nullptr), server_nonce_(std::move(server_nonce)) {
  if (secret != nullptr) {
    secret_ = *secret;
  } else {
    std::string digest = detail::sha256(fake_salt_seed);
    secret_.iterations = kMockIterations;
    secret_.salt = digest.substr(0, kMockSaltLength);
    secret_.stored_key = detail::hmac_sha256(digest, "mock StoredKey");
    secret_.server_key = detail::hmac_sha256(digest, "mock ServerKey");
  }
  if (server_nonce_.empty()) server_nonce_ = random_nonce();
}

Result<std::string> ScramServer::on_client_first(std::string_view message) {
  bool in_order = step_ == Step::kStart;
  step_ = Step::kFailed;  // until this message is accepted: any error ends the exchange
  if (!in_order) return client_malformed("unexpected client-first-message");
  if (!detail::is_printable_nonce(server_nonce_)) {
    return Status::proxy("XX000", "SCRAM server nonce is not printable ASCII");
  }
  if (message.empty()) return client_malformed("the message is empty");
  if (message.find('\0') != std::string_view::npos)
    return client_malformed("the message contains a NUL byte");

  // gs2-header: cbind-flag "," [authzid] ","
  char flag = message[0];
  if (flag == 'p') {
    return Status::client("28000",
                          "SCRAM channel binding is not supported: the client requested "
                          "SCRAM-SHA-256-PLUS channel binding (\"p=\"), but only SCRAM-SHA-256 is offered");
  }
  if (flag != 'n' && flag != 'y') return client_malformed("unexpected channel-binding flag");
  // 'y' (client supports channel binding, thinks the server does not) is correct here because
  // SCRAM-SHA-256-PLUS is never advertised; a server offering PLUS would have to refuse it.
  if (message.size() < 2 || message[1] != ',')
    return client_malformed("comma expected after the channel-binding flag");
  if (message.size() >= 3 && message[2] == 'a') {
    return Status::client("0A000", "client uses SCRAM authorization identity, but it is not supported");
  }
  if (message.size() < 3 || message[2] != ',') return client_malformed("comma expected after the gs2 header");
  std::string_view bare = message.substr(3);
  if (!bare.empty() && bare[0] == 'm') {
    return Status::client("0A000", "client requires an unsupported SCRAM extension");
  }

  AttributeReader reader(bare);
  // The user name is ignored (PostgreSQL uses the startup packet's), but must be present.
  if (!reader.expect('n')) return client_malformed("attribute \"n\" expected in client-first-message");
  auto nonce = reader.expect('r');
  if (!nonce) return client_malformed("attribute \"r\" expected in client-first-message");
  if (!detail::is_printable_nonce(*nonce)) {
    return client_malformed("the client nonce must be non-empty printable ASCII without commas");
  }
  while (!reader.at_end()) {  // optional extensions: none supported, ignored like PostgreSQL
    if (!reader.next()) return client_malformed("invalid attribute in client-first-message");
  }

  cbind_flag_ = flag;
  client_first_bare_ = std::string(bare);
  combined_nonce_ = std::string(*nonce) + server_nonce_;
  server_first_ = "r=" + combined_nonce_ + ",s=" + base64_encode(secret_.salt) +
                  ",i=" + std::to_string(secret_.iterations);
  step_ = Step::kFirstDone;
  return server_first_;
}

Result<std::string> ScramServer::on_client_final(std::string_view message) {
  bool in_order = step_ == Step::kFirstDone;
  step_ = Step::kFailed;  // until this message is accepted: any error ends the exchange
  if (!in_order) return client_malformed("unexpected client-final-message");
  if (message.empty()) return client_malformed("the message is empty");
  if (message.find('\0') != std::string_view::npos)
    return client_malformed("the message contains a NUL byte");

  AttributeReader reader(message);
  auto binding = reader.expect('c');
  if (!binding) return client_malformed("attribute \"c\" expected in client-final-message");
  // Without channel binding, c= is the base64 of the gs2 header sent in client-first.
  std::string_view expected_binding = cbind_flag_ == 'y' ? "eSws" : "biws";
  if (*binding != expected_binding) {
    return client_malformed("unexpected channel-binding attribute in client-final-message");
  }
  auto nonce = reader.expect('r');
  if (!nonce) return client_malformed("attribute \"r\" expected in client-final-message");

  std::string_view proof_b64;
  size_t proof_start = 0;
  for (;;) {  // optional extensions, then the proof
    size_t start = reader.position();
    auto attr = reader.next();
    if (!attr) return client_malformed("attribute \"p\" expected in client-final-message");
    if (attr->first == 'p') {
      proof_b64 = attr->second;
      proof_start = start;
      break;
    }
  }
  if (!reader.at_end()) return client_malformed("garbage at the end of client-final-message");
  auto proof = base64_decode(proof_b64);
  if (!proof || proof->size() != detail::kKeyLength)
    return client_malformed("malformed proof in client-final-message");
  if (*nonce != combined_nonce_) return client_malformed("the nonce in client-final-message does not match");

  // AuthMessage = client-first-message-bare "," server-first-message ","
  //               client-final-message-without-proof
  std::string auth_message =
      client_first_bare_ + "," + server_first_ + "," + std::string(message.substr(0, proof_start - 1));
  std::string client_signature = detail::hmac_sha256(secret_.stored_key, auth_message);
  std::string client_key = detail::xor_bytes(*proof, client_signature);
  bool proof_ok = constant_time_equal(detail::sha256(client_key), secret_.stored_key);
  detail::wipe(client_key);
  if (!proof_ok || mock_) return authentication_failed();

  step_ = Step::kDone;
  return "v=" + base64_encode(detail::hmac_sha256(secret_.server_key, auth_message));
}

// An empty client_nonce is replaced by a fresh random_nonce().
ScramClient::ScramClient(std::string password, std::string client_nonce)
    : password_(std::move(password)), client_nonce_(std::move(client_nonce)) {
  if (client_nonce_.empty()) client_nonce_ = random_nonce();
  client_first_bare_ = "n=,r=" + client_nonce_;  // libpq leaves the user name empty
}

std::string ScramClient::client_first() { return "n,," + client_first_bare_; }

Result<std::string> ScramClient::on_server_first(std::string_view message) {
  bool in_order = step_ == Step::kStart;
  step_ = Step::kFailed;  // until this message is accepted: any error ends the exchange
  if (!in_order) return server_malformed("unexpected server-first-message");
  if (!detail::is_printable_nonce(client_nonce_)) {
    return Status::proxy("XX000", "SCRAM client nonce is not printable ASCII");
  }
  if (message.empty()) return server_malformed("the message is empty");
  if (message.find('\0') != std::string_view::npos)
    return server_malformed("the message contains a NUL byte");

  AttributeReader reader(message);
  auto nonce = reader.expect('r');
  if (!nonce) return server_malformed("attribute \"r\" expected in server-first-message");
  if (nonce->size() <= client_nonce_.size() || nonce->substr(0, client_nonce_.size()) != client_nonce_) {
    return Status::server("08P01",
                          "invalid SCRAM response: the server nonce does not extend the client nonce");
  }
  if (nonce->size() > kMaxNonceLength) {
    return Status::server("08P01", "invalid SCRAM response: the nonce is longer than " +
                                       std::to_string(kMaxNonceLength) + " bytes");
  }
  if (!detail::is_printable_nonce(*nonce)) return server_malformed("the nonce is not printable ASCII");
  auto salt_b64 = reader.expect('s');
  if (!salt_b64) return server_malformed("attribute \"s\" expected in server-first-message");
  auto salt = base64_decode(*salt_b64);
  if (!salt || salt->empty()) return server_malformed("invalid salt");
  auto iterations_text = reader.expect('i');
  if (!iterations_text) return server_malformed("attribute \"i\" expected in server-first-message");
  auto iterations = detail::parse_posit_number(*iterations_text, kMaxIterations);
  if (!iterations) return server_malformed("invalid iteration count");
  if (*iterations > kMaxIterations) {
    return Status::server("28000", "the server asked for more than " + std::to_string(kMaxIterations) +
                                       " SCRAM iterations; refusing to authenticate");
  }
  if (!reader.at_end()) return server_malformed("garbage at the end of server-first-message");

  std::string salted = detail::cached_salted_password(password_, *salt, static_cast<uint32_t>(*iterations));
  detail::wipe(password_);  // not needed again
  std::string client_key = detail::hmac_sha256(salted, "Client Key");
  server_key_ = detail::hmac_sha256(salted, "Server Key");
  detail::wipe(salted);

  std::string final_without_proof = "c=biws,r=" + std::string(*nonce);
  auth_message_ = client_first_bare_ + "," + std::string(message) + "," + final_without_proof;
  std::string client_signature = detail::hmac_sha256(detail::sha256(client_key), auth_message_);
  std::string proof = detail::xor_bytes(client_key, client_signature);
  detail::wipe(client_key);
  step_ = Step::kFirstDone;
  return final_without_proof + ",p=" + base64_encode(proof);
}

Status ScramClient::on_server_final(std::string_view message) {
  bool in_order = step_ == Step::kFirstDone;
  step_ = Step::kFailed;  // until this message is accepted: any error ends the exchange
  if (!in_order) return server_malformed("unexpected server-final-message");
  if (message.empty()) return server_malformed("the message is empty");
  if (message.find('\0') != std::string_view::npos)
    return server_malformed("the message contains a NUL byte");

  AttributeReader reader(message);
  if (auto error = reader.expect('e')) {
    return Status::server("28000", "the server rejected SCRAM authentication: " + sanitize(*error));
  }
  auto signature_b64 = reader.expect('v');
  if (!signature_b64) return server_malformed("attribute \"v\" expected in server-final-message");
  if (!reader.at_end()) return server_malformed("garbage at the end of server-final-message");
  auto signature = base64_decode(*signature_b64);
  if (!signature || signature->size() != detail::kKeyLength)
    return server_malformed("invalid server signature");
  if (!constant_time_equal(*signature, detail::hmac_sha256(server_key_, auth_message_))) {
    return Status::server("28000",
                          "invalid SCRAM server signature: the server could not prove it knows the password");
  }
  step_ = Step::kDone;
  return Status::ok();
}

}  // namespace sw::auth
