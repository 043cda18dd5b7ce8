#include "net/tls.h"

#include <arpa/inet.h>
#include <openssl/buffer.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <algorithm>

namespace sw::net {
namespace {

// A memory BIO keeps the largest size it ever held. Past this, a drained BIO is replaced by an
// empty one, so an idle session does not hold the size of the largest message it carried.
constexpr size_t kIdleBioKeep = size_t{8} * 1024;

bool drained_and_grown(BIO* bio) {
  if (bio == nullptr || BIO_ctrl_pending(bio) != 0) return false;
  BUF_MEM* memory = nullptr;
  return BIO_get_mem_ptr(bio, &memory) == 1 && memory != nullptr && memory->max > kIdleBioKeep;
}

// Drains this thread's OpenSSL error queue into "reason; reason" (the queue is thread-local and
// must not leak into the next session on the same loop). Generic wrappers ("system lib",
// "PEM lib") are dropped when a specific reason exists.
std::string openssl_errors() {
  std::string out;
  std::string generic;
  while (unsigned long code = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(code, buf, sizeof buf);
    // "error:<hex>:<library>:<function>:<reason>": keep the reason.
    std::string_view text(buf);
    size_t start = 0;
    for (int colons = 0; colons < 4; ++colons) {
      size_t colon = text.find(':', start);
      if (colon == std::string_view::npos) break;
      start = colon + 1;
    }
    std::string reason(text.substr(start));
    if (reason.size() > 4 && reason.compare(reason.size() - 4, 4, " lib") == 0) {
      if (generic.empty()) generic = reason;
      continue;
    }
    if (reason.empty() || out.find(reason) != std::string::npos) continue;
    if (!out.empty()) out += "; ";
    out += reason;
  }
  if (out.empty()) out = generic.empty() ? "unknown OpenSSL error" : generic;
  return out;
}

// Refuses passphrase-protected keys instead of prompting on the terminal.
int no_passphrase(char*, int, int, void*) { return 0; }

bool is_ip_address(const std::string& host) {
  unsigned char buf[16];
  return inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

// Settings both sides share: TLS 1.2 minimum, no renegotiation, no compression, small idle memory.
SSL_CTX* new_context(const SSL_METHOD* method) {
  SSL_CTX* ctx = SSL_CTX_new(method);
  if (ctx == nullptr) return nullptr;
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION);
  SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
  SSL_CTX_set_default_passwd_cb(ctx, no_passphrase);
  return ctx;
}

}  // namespace

Result<std::shared_ptr<TlsContext>> TlsContext::make_server(const std::string& cert_file,
                                                            const std::string& key_file) {
  ERR_clear_error();
  SSL_CTX* ctx = new_context(TLS_server_method());
  if (ctx == nullptr) return Status::proxy("XX000", "cannot create TLS context: " + openssl_errors());
  std::shared_ptr<TlsContext> context(new TlsContext(ctx, /*server=*/true, /*verify=*/false));
  // Like PostgreSQL: no session cache or tickets, so no resumption state to protect or expire.
  SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET | SSL_OP_CIPHER_SERVER_PREFERENCE);
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
  SSL_CTX_set_num_tickets(ctx, 0);
  if (SSL_CTX_use_certificate_chain_file(ctx, cert_file.c_str()) != 1) {
    return Status::config("cannot load TLS certificate file \"" + cert_file + "\": " + openssl_errors());
  }
  if (SSL_CTX_use_PrivateKey_file(ctx, key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    return Status::config("cannot load TLS private key file \"" + key_file + "\": " + openssl_errors());
  }
  if (SSL_CTX_check_private_key(ctx) != 1) {
    return Status::config("TLS private key file \"" + key_file + "\" does not match certificate file \"" +
                          cert_file + "\": " + openssl_errors());
  }
  return context;
}

// verify=false (sslmode=require): encryption only, root_cert_file is not used.
// verify=true (sslmode=verify-full): chain checked against the system store plus root_cert_file,
// and each TlsSession checks the host name it is given.
Result<std::shared_ptr<TlsContext>> TlsContext::make_client(bool verify, const std::string& root_cert_file) {
  ERR_clear_error();
  SSL_CTX* ctx = new_context(TLS_client_method());
  if (ctx == nullptr) return Status::proxy("XX000", "cannot create TLS context: " + openssl_errors());
  std::shared_ptr<TlsContext> context(new TlsContext(ctx, /*server=*/false, verify));
  if (!verify) {
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
    return context;
  }
  if (SSL_CTX_set_default_verify_paths(ctx) != 1) ERR_clear_error();  // no system store: root file only
  if (!root_cert_file.empty() && SSL_CTX_load_verify_locations(ctx, root_cert_file.c_str(), nullptr) != 1) {
    return Status::config("cannot load TLS root certificate file \"" + root_cert_file +
                          "\": " + openssl_errors());
  }
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  return context;
}

TlsContext::~TlsContext() { SSL_CTX_free(ctx_); }

// Setup errors are kept in failed_ and returned by the first call that needs the session.
TlsSession::TlsSession(std::shared_ptr<TlsContext> context, const std::string& hostname)
    : context_(std::move(context)) {
  if (context_ == nullptr || context_->raw() == nullptr) {
    failed_ = Status::proxy("XX000", "TLS session without a context");
    return;
  }
  ERR_clear_error();
  ssl_ = SSL_new(context_->raw());
  BIO* in = BIO_new(BIO_s_mem());
  BIO* out = BIO_new(BIO_s_mem());
  if (ssl_ == nullptr || in == nullptr || out == nullptr) {
    BIO_free(in);
    BIO_free(out);
    SSL_free(ssl_);
    ssl_ = nullptr;
    failed_ = Status::proxy("XX000", "cannot create TLS session: " + openssl_errors());
    return;
  }
  BIO_set_mem_eof_return(in, -1);  // an empty input BIO means "wait for more", not EOF
  SSL_set_bio(ssl_, in, out);      // ssl_ owns both BIOs from here
  in_bio_ = in;
  out_bio_ = out;
  if (context_->is_server()) {
    SSL_set_accept_state(ssl_);
    return;
  }
  SSL_set_connect_state(ssl_);
  bool ip = is_ip_address(hostname);
  if (!hostname.empty() && !ip) SSL_set_tlsext_host_name(ssl_, hostname.c_str());  // SNI
  if (!context_->verifies_peer()) return;
  if (hostname.empty()) {
    failed_ = Status::config("TLS certificate verification needs the server's host name");
    return;
  }
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl_);
  X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
  int ok = ip ? X509_VERIFY_PARAM_set1_ip_asc(param, hostname.c_str())
              : X509_VERIFY_PARAM_set1_host(param, hostname.c_str(), hostname.size());
  if (ok != 1) {
    ERR_clear_error();
    failed_ = Status::config("invalid host name \"" + hostname + "\" for TLS certificate verification");
  }
}

TlsSession::~TlsSession() { SSL_free(ssl_); }

Status TlsSession::peer_error(const std::string& what) const {
  return context_ != nullptr && context_->is_server() ? Status::client("08P01", what)
                                                      : Status::server("08P01", what);
}

Status TlsSession::start_handshake() {
  if (!failed_.is_ok()) return failed_;
  if (context_->is_server() || done_) return Status::ok();  // servers wait for the ClientHello
  return pump_handshake();
}

Status TlsSession::on_ciphertext(std::string_view ciphertext, std::string& plaintext) {
  if (!failed_.is_ok()) return failed_;
  auto* in = static_cast<BIO*>(in_bio_);
  while (!ciphertext.empty()) {
    size_t written = 0;
    if (BIO_write_ex(in, ciphertext.data(), ciphertext.size(), &written) != 1 || written == 0) {
      failed_ = Status::proxy("XX000", "TLS input buffer: " + openssl_errors());
      return failed_;
    }
    ciphertext.remove_prefix(written);
  }
  if (!done_) {
    Status status = pump_handshake();
    if (!status.is_ok() || !done_) return status;
  }
  Status status = decrypt_into(plaintext);
  if (status.is_ok() && drained_and_grown(in)) {
    if (BIO* fresh = BIO_new(BIO_s_mem())) {
      BIO_set_mem_eof_return(fresh, -1);
      SSL_set0_rbio(ssl_, fresh);  // frees the grown one
      in_bio_ = fresh;
    }
  }
  return status;
}

Status TlsSession::write_plaintext(std::string_view plaintext) {
  if (!failed_.is_ok()) return failed_;
  if (!done_) {
    pending_plaintext_.append(plaintext);
    return Status::ok();
  }
  return encrypt(plaintext);
}

std::string TlsSession::take_ciphertext() {
  std::string out;
  auto* bio = static_cast<BIO*>(out_bio_);
  if (bio == nullptr) return out;
  out.resize(BIO_ctrl_pending(bio));
  size_t read = 0;
  if (out.empty() || BIO_read_ex(bio, out.data(), out.size(), &read) != 1) read = 0;
  out.resize(read);
  if (drained_and_grown(bio)) {
    if (BIO* fresh = BIO_new(BIO_s_mem())) {
      SSL_set0_wbio(ssl_, fresh);  // frees the grown one
      out_bio_ = fresh;
    }
  }
  return out;
}

// Advances the handshake with the input buffered so far; on completion, encrypts what
// write_plaintext() buffered meanwhile. A failure leaves the alert in the output BIO.
Status TlsSession::pump_handshake() {
  ERR_clear_error();
  int rc = SSL_do_handshake(ssl_);
  if (rc == 1) {
    done_ = true;
    std::string pending = std::move(pending_plaintext_);
    pending_plaintext_.clear();
    return pending.empty() ? Status::ok() : encrypt(pending);
  }
  int error = SSL_get_error(ssl_, rc);
  if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) return Status::ok();
  std::string reason = openssl_errors();
  long verify = SSL_get_verify_result(ssl_);
  if (!context_->is_server() && verify != X509_V_OK) {
    reason += std::string(" (") + X509_verify_cert_error_string(verify) + ")";
  }
  failed_ = peer_error("TLS handshake failed: " + reason);
  return failed_;
}

Status TlsSession::encrypt(std::string_view plaintext) {
  while (!plaintext.empty()) {
    ERR_clear_error();
    size_t written = 0;
    size_t chunk = std::min<size_t>(plaintext.size(), size_t{1} << 30);
    if (SSL_write_ex(ssl_, plaintext.data(), chunk, &written) != 1) {
      failed_ = peer_error("TLS write failed: " + openssl_errors());
      return failed_;
    }
    plaintext.remove_prefix(written);
  }
  return Status::ok();
}

// Appends every complete record's plaintext. A close_notify from the peer is not an error: the
// session stops yielding data and the socket's EOF ends the connection.
Status TlsSession::decrypt_into(std::string& plaintext) {
  constexpr size_t kChunk = size_t{16} * 1024;
  for (;;) {
    ERR_clear_error();
    size_t old_size = plaintext.size();
    plaintext.resize(old_size + kChunk);
    size_t read = 0;
    int rc = SSL_read_ex(ssl_, plaintext.data() + old_size, kChunk, &read);
    plaintext.resize(old_size + (rc == 1 ? read : 0));
    if (rc == 1) continue;
    int error = SSL_get_error(ssl_, rc);
    if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE || error == SSL_ERROR_ZERO_RETURN) {
      return Status::ok();
    }
    failed_ = peer_error("TLS read failed: " + openssl_errors());
    return failed_;
  }
}

}  // namespace sw::net
