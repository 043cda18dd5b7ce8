// TLS as a pure byte transform over OpenSSL memory BIOs: ciphertext from the peer goes in,
// plaintext comes out, and the reverse. The socket code (connection.*) moves the bytes.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"

typedef struct ssl_ctx_st SSL_CTX;
typedef struct ssl_st SSL;

namespace sw::net {

class TlsContext {
 public:
  // Server context from PEM files; errors name the file (config fault).
  static Result<std::shared_ptr<TlsContext>> make_server(const std::string& cert_file,
                                                         const std::string& key_file);
  // Client context; verify=true checks the peer certificate against the system store (and
  // `root_cert_file` when not empty), as sslmode=verify-full does.
  static Result<std::shared_ptr<TlsContext>> make_client(bool verify, const std::string& root_cert_file);
  ~TlsContext();
  SSL_CTX* raw() const { return ctx_; }
  bool is_server() const { return server_; }
  bool verifies_peer() const { return verify_; }

 private:
  TlsContext(SSL_CTX* ctx, bool server, bool verify) : ctx_(ctx), server_(server), verify_(verify) {}
  SSL_CTX* ctx_;
  bool server_;
  bool verify_;
};

class TlsSession {
 public:
  // `hostname` is used for SNI and verification on client sessions.
  TlsSession(std::shared_ptr<TlsContext> context, const std::string& hostname = {});
  ~TlsSession();
  TlsSession(const TlsSession&) = delete;
  TlsSession& operator=(const TlsSession&) = delete;

  // Ciphertext received from the peer. Drives the handshake; decrypted bytes are appended to
  // `plaintext`. Errors (handshake failure, bad record) are 08P01 faults of the peer.
  Status on_ciphertext(std::string_view ciphertext, std::string& plaintext);
  // Encrypts application data; the records become available from take_ciphertext().
  Status write_plaintext(std::string_view plaintext);
  // Starts the handshake on client sessions (produces the ClientHello).
  Status start_handshake();
  // Bytes to send to the peer (handshake records and encrypted data); empties the buffer.
  std::string take_ciphertext();
  bool handshake_done() const { return done_; }

 private:
  Status pump_handshake();
  Status encrypt(std::string_view plaintext);
  Status decrypt_into(std::string& plaintext);
  Status peer_error(const std::string& what) const;  // 08P01, blamed on the peer
  std::shared_ptr<TlsContext> context_;
  SSL* ssl_ = nullptr;
  void* in_bio_ = nullptr;   // BIO*: peer -> ssl
  void* out_bio_ = nullptr;  // BIO*: ssl -> peer
  bool done_ = false;
  std::string pending_plaintext_;  // written before the handshake finished
  Status failed_;                  // sticky: set by a setup or protocol error
};

}  // namespace sw::net
