// Fuzz target: a client's login, from the first byte it sends to authenticated.
//
// Session (proxy/session) drives the login from socket callbacks, so this target runs the same
// loop over a byte buffer: startup packets (read_startup_packet -> parse_startup_packet) with
// Session::handle_startup_packet's rules, then 'p' frames (read_frame) fed to the real
// session::ClientAuth. Input byte 0 picks the configuration:
//   bits 0-1  auth method: 0 trust, 1 md5, 2 scram-sha-256, 3 scram-sha-256 with a fixed server
//             nonce (ClientAuth's test seam) and alice's stored verifier. Random nonces and md5
//             salts keep a fuzzer from ever completing an exchange; with the fixed nonce the seed
//             corpus holds a valid client-final-message and the success path is reached.
//   bit 2     user "alice" is configured with a SCRAM verifier instead of a cleartext password.
// The rest is what the client sends, as records (2-byte length + bytes, RecordSplitter): one
// record is one socket read, appended to the session's input buffer before the login loop runs
// again, so "sent in the same packet as" and "sent later" are both expressible.
//
// The loop itself copies Session's rules (bytes buffered behind an SSLRequest end the login, a
// second SSLRequest too, trust admits configured users only); it is a model, not Session's code.
// Invariants checked on the real code: a user not in auth.users never authenticates (the mock
// SCRAM exchange and the md5 check always fail); an accepted StartupMessage has a user; once it
// is accepted, a second one (first byte 0x00) is a frame error for read_frame; every failure is
// one of the SQLSTATEs a login may end with; a reply is sent for every step that needs more.
#include <optional>
#include <string>
#include <string_view>

#include "auth/base64.h"
#include "auth/scram.h"
#include "config/config.h"
#include "fuzz_check.h"
#include "session/client_auth.h"
#include "wire/frame_reader.h"
#include "wire/messages.h"
#include "wire/startup.h"

namespace {

using namespace sw;
using sw::fuzz::ExactCopy;

constexpr std::string_view kPassword = "pencil";
constexpr std::string_view kSalt = "shardwire-fuzz-s";        // 16 bytes, as PostgreSQL's salts
constexpr uint32_t kIterations = 16;                          // cheap; the value is irrelevant here
constexpr std::string_view kServerNonce = "FuzzServerNonce";  // tests/fuzz/make_seeds.py uses it

const auth::ScramSecret& known_secret() {
  static const auth::ScramSecret secret = auth::make_scram_secret(kPassword, kSalt, kIterations);
  return secret;
}

std::string verifier_text(const auth::ScramSecret& s) {
  return "SCRAM-SHA-256$" + std::to_string(s.iterations) + ":" + auth::base64_encode(s.salt) + "$" +
         auth::base64_encode(s.stored_key) + ":" + auth::base64_encode(s.server_key);
}

bool is_login_failure_state(const std::string& sqlstate) {
  return sqlstate == "08P01" || sqlstate == "28P01" || sqlstate == "28000" || sqlstate == "0A000";
}

enum class Method { Trust, Md5, Scram, ScramFixedNonce };

class Login {
 public:
  Login(Method method, bool verifier) : method_(method) {
    // The fixed-nonce mode needs the verifier the seeds were computed against.
    const bool stored = (verifier || method == Method::ScramFixedNonce) && method != Method::Md5;
    config::User alice{"alice", stored ? verifier_text(known_secret()) : std::string(kPassword)};
    auth_.method = method == Method::Trust ? config::AuthMethod::Trust
                   : method == Method::Md5 ? config::AuthMethod::Md5
                                           : config::AuthMethod::ScramSha256;
    auth_.users = {alice, {"bob", "SCRAM-SHA-256$4096:bm90IGEgc2FsdA==$broken"}};
  }

  // One socket read: the bytes join the input buffer and the login goes as far as it can.
  void on_read(std::string_view bytes) {
    if (phase_ == Phase::Closed) return;
    buffer_.append(bytes);
    while (phase_ == Phase::Startup && startup_step()) {}
    while (phase_ == Phase::Authenticating && auth_step()) {}
    if (phase_ == Phase::Ready) FUZZ_CHECK(user_ != nullptr);
    if (phase_ == Phase::Ready || phase_ == Phase::Authenticating) check_second_startup();
  }

 private:
  enum class Phase { Startup, Authenticating, Ready, Closed };

  // One startup-phase packet; false when the loop must wait or the login ended.
  bool startup_step() {
    ExactCopy input(buffer_);
    wire::FrameResult frame = wire::read_startup_packet(input.view());
    if (frame.status == wire::FrameStatus::NeedMore) return false;
    if (frame.status == wire::FrameStatus::Error) return close();
    ExactCopy body(frame.frame.body);
    auto packet = wire::parse_startup_packet(body.view());
    buffer_.erase(0, frame.frame.size);
    if (!packet) {
      FUZZ_CHECK(is_login_failure_state(packet.status().sqlstate));
      return close();
    }
    switch (packet->kind) {
      case wire::StartupKind::CancelRequest: return close();
      case wire::StartupKind::GssEncRequest: return true;  // answered 'N'
      case wire::StartupKind::SslRequest:
        if (tls_done_) return close();
        if (!buffer_.empty()) return close();  // would bypass encryption (CVE-2021-23214)
        tls_done_ = true;                      // as if the TLS handshake succeeded
        return true;
      case wire::StartupKind::Startup: break;
    }
    FUZZ_CHECK(!packet->param("user").empty());
    user_name_ = std::string(packet->param("user"));
    user_ = auth_.find(user_name_);
    client_auth_.emplace(auth_.method, user_, user_name_,
                         method_ == Method::ScramFixedNonce ? std::string(kServerNonce) : std::string());
    const std::string request = client_auth_->begin();
    if (request.empty()) {  // trust admits configured users only
      phase_ = user_ != nullptr ? Phase::Ready : Phase::Closed;
      return false;
    }
    FUZZ_CHECK(request.size() > 5 && request[0] == 'R');
    phase_ = Phase::Authenticating;
    return false;
  }

  // One 'p' frame; false when the loop must wait or the login ended.
  bool auth_step() {
    ExactCopy input(buffer_);
    wire::FrameResult frame = wire::read_frame(input.view(), wire::Sender::Client, limits_);
    if (frame.status == wire::FrameStatus::NeedMore) return false;
    if (frame.status == wire::FrameStatus::Error || frame.frame.type != 'p') return close();
    ExactCopy body(frame.frame.body);
    buffer_.erase(0, frame.frame.size);
    std::string reply;
    Result<bool> done = client_auth_->on_message(body.view(), reply);
    if (!done) {
      FUZZ_CHECK(is_login_failure_state(done.status().sqlstate));
      return close();
    }
    if (!*done) {
      FUZZ_CHECK(!reply.empty());
      return true;
    }
    FUZZ_CHECK(user_ != nullptr);  // the mock exchange and md5 never admit an unknown user
    phase_ = Phase::Ready;
    return false;
  }

  // After the StartupMessage every frame has a type byte; a StartupMessage (or any untyped
  // packet under 16 MiB) starts with 0x00, which is no frontend message type.
  void check_second_startup() {
    if (buffer_.empty() || buffer_[0] != '\0') return;
    ExactCopy input(buffer_);
    wire::FrameResult frame = wire::read_frame(input.view(), wire::Sender::Client, limits_);
    FUZZ_CHECK(frame.status == wire::FrameStatus::Error);
  }

  bool close() {
    phase_ = Phase::Closed;
    return false;
  }

  Method method_;
  config::Auth auth_;
  wire::Limits limits_;
  std::string buffer_;  // received, not yet consumed
  Phase phase_ = Phase::Startup;
  bool tls_done_ = false;
  std::string user_name_;
  const config::User* user_ = nullptr;
  std::optional<session::ClientAuth> client_auth_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const auto method = static_cast<Method>(data[0] & 3);
  const bool verifier = (data[0] & 4) != 0;
  Login login(method, verifier);
  const std::string_view sent(reinterpret_cast<const char*>(data) + 1, size - 1);
  sw::fuzz::RecordSplitter reads(sent);
  std::string_view bytes;
  while (reads.next(bytes)) login.on_read(bytes);
  return 0;
}
