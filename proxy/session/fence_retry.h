// What happens when a shard answers SW001 (it no longer owns a bucket: the proxy's directory is
// stale). The first request of a transaction is kept until its answer starts; if SW001 comes
// before that, the error is swallowed, the server is dropped once its ReadyForQuery arrives, and
// the request (BEGIN included) runs again from the start once the directory has moved on (one
// retry per request). Anything later gets 40001 so the client retries the transaction.
// While the first request's answer has not started, ParseComplete/BindComplete/descriptions are
// held back so a retry does not show them to the client twice. Pure: no I/O, no timers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace sw::session {

class FenceRetry {
 public:
  static constexpr size_t kMaxCapturedRequest = 1024 * 1024;
  static constexpr uint64_t kDirectoryPollMs = 10;
  static constexpr int kDirectoryPolls = 200;  // wait up to 2 s for a newer directory

  // The request about to be routed was routed with this directory version.
  void on_routed(uint64_t directory_version) { routed_version_ = directory_version; }
  // A server was attached for a transaction: `begin` is the deferred BEGIN sent ahead of the
  // first request ("" if none). `capture` is false when a retry could not help (a batch that
  // runs outside the transaction).
  void on_attach(std::string begin, bool capture);
  // A client message forwarded to the server: kept while the first request may be retried.
  void capture(std::string_view whole_message);

  // Server (or proxy) answers on their way to the client, through `write(std::string_view)`.
  template <class Write>
  void to_client(std::string_view bytes, Write&& write) {
    if (bytes.empty()) return;
    char type = bytes[0];
    bool preamble = type == '1' || type == '2' || type == 't' || type == 'n' || type == 'T';
    if (capturing_ && !answer_started_ && !flushed_ && preamble) {
      held_.append(bytes);
      return;
    }
    if (!held_.empty()) {
      write(std::string_view(held_));
      held_.clear();
    }
    write(bytes);
    if (type != 'N' && type != 'A' && type != 'S') answer_started_ = true;
  }

  // The client sent Flush: it waits for every answer owed so far, so nothing is held back from
  // here on (held answers go out through `write`). A retry stays possible until one went out.
  template <class Write>
  void on_flush(Write&& write) {
    flushed_ = true;
    if (held_.empty()) return;
    write(std::string_view(held_));
    held_.clear();
    answer_started_ = true;
  }

  // An ErrorResponse with SQLSTATE SW001 for the client. True: swallow it, the request will be
  // retried; false: the client gets a 40001 instead.
  bool on_fence_error();
  // The ReadyForQuery that ends a client request arrived. True: it is the end of the refused
  // first request; swallow it and call start_retry().
  bool on_request_answered(size_t idle_buffer_keep);
  // Drops the answers held back and puts the first request in front of the client's input.
  // Returns the BEGIN to defer again.
  std::string start_retry();
  // Polled every kDirectoryPollMs while retrying: true once the request may run again (the
  // directory is newer than the one that routed it, or the wait is over).
  bool poll(bool have_directory, uint64_t directory_version);

  bool pending() const { return pending_; }  // a refused request waits to run again
  // Client input replaces the connection's input while the first request runs again.
  bool replaying() const { return !replay_.empty(); }
  std::string_view replay_input() const { return replay_; }
  void consume_replay(size_t n) { replay_.erase(0, n); }

 private:
  std::string replay_;         // the first request being run again
  std::string first_request_;  // the first request as forwarded, while it may be retried
  std::string begin_;          // the deferred BEGIN that went ahead of it
  std::string held_;           // answers held back while the first request's answer has not started
  bool capturing_ = false;
  bool answer_started_ = false;
  bool flushed_ = false;  // a Flush asked for the answers: none is held back
  bool pending_ = false;
  bool retried_ = false;  // one retry per request
  uint64_t routed_version_ = 0;
  int polls_ = 0;
};

}  // namespace sw::session
