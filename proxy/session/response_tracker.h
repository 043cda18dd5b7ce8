// Knows which server responses are owed for the messages forwarded to a server, so the session
// can tell when a server is back at a transaction boundary, swallow answers to messages the proxy
// injected, and emit answers the proxy gives itself in their exact place in the stream.
// Pure: no I/O.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "parser/analyze.h"
#include "session/error_position.h"

namespace sw::session {

// What a forwarded (or proxy-answered) message is owed.
enum class Owed : uint8_t {
  Parse,              // '1'
  Bind,               // '2'
  DescribeStatement,  // 't' then 'T' | 'n'
  DescribePortal,     // 'T' | 'n'
  Execute,            // 'D'* ... 'C' | 'I' | 's' (or COPY sub-protocol then 'C')
  Close,              // '3'
  Sync,               // 'Z'
  Query,              // anything, ends at 'Z' (also FunctionCall)
  Synthetic,          // bytes the proxy sends itself when their turn comes
  CopyEnd,            // nothing: where the client ended a COPY FROM STDIN before its 'G' came
};

// Small on purpose: every forwarded message queues one and every answer completes one. The text
// that goes with a few of them (a Synthetic's bytes, a Parse's client name) is kept beside the
// queue, in a slot that keeps its capacity (ExpectationQueue), never in this struct.
struct Expectation {
  Owed owed = Owed::Sync;
  bool relay = true;         // relay the server's answer to the client
  bool relay_errors = true;  // relay an ErrorResponse even when relay is false
  // Synthetic: a ParseComplete the proxy answers for a client's Parse (its text is then the
  // client's name, not the bytes to send).
  bool parse_complete = false;
  // Parse: the statement being prepared (forgotten if it fails); Bind, Describe: the shared
  // statement named (retired if the server's plan of it is stale).
  uint64_t statement = 0;
  // A Parse of a text the proxy rewrote (an EXECUTE of the client's SQL-level statement): its
  // error's position is moved back into the client's text.
  std::shared_ptr<const RewrittenText> rewritten;
  // Execute of a statement that changes session settings: they count once it completes.
  std::shared_ptr<const parser::QueryFacts> settings;
};

// What an expectation's text is: a Parse's (or answered Parse's) client name, which it does not
// define when the Parse fails or the server skips it after an error; else a Synthetic's bytes.
inline bool text_is_client_name(const Expectation& e) { return e.owed == Owed::Parse || e.parse_complete; }

// A Parse that failed or was skipped after an error: the server statement it was to prepare
// there (`on_server`: a Parse the server was sent), the client's name it was to define.
struct FailedParse {
  uint64_t statement = 0;
  bool on_server = false;
  std::string client_name;
};

// The expectations in order: a ring of reused slots, so a steady stream of requests allocates
// nothing (a std::deque allocates a block each time its front crosses one); it doubles when full.
// Each slot has its text beside it (empty for most), assigned in place: a string keeps its capacity.
class ExpectationQueue {
 public:
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  Expectation& front() { return slots_[head_]; }
  const Expectation& front() const { return slots_[head_]; }
  // The index-th from the front.
  const Expectation& at(size_t index) const { return slots_[(head_ + index) & (slots_.size() - 1)]; }
  std::string& front_text() { return texts_[head_]; }
  void push_back(Expectation&& expectation, std::string_view text);
  // Removes the index-th from the front; the ones after it move up (a few: the queue is short).
  void erase(size_t index);
  void pop_front() {
    head_ = (head_ + 1) & (slots_.size() - 1);
    --size_;
  }
  void clear() {
    head_ = 0;
    size_ = 0;
  }

 private:
  std::vector<Expectation> slots_;  // a power of two in size, or empty
  std::vector<std::string> texts_;  // as many as slots_
  size_t head_ = 0;
  size_t size_ = 0;
};

class ResponseTracker {
 public:
  enum class Verdict { Relay, Swallow, Desync };

  struct Outcome {
    Verdict verdict = Verdict::Relay;
    bool completed = false;  // the message finished the head expectation
    Expectation finished;    // that expectation, when completed
  };

  // Appends an expectation with its text (text_is_client_name; a Synthetic's bytes). A Synthetic
  // with nothing owed before it is returned in `emit_now` instead of being queued (`emit_now` may
  // be null for anything else). After an error whose batch's Sync is not expected yet, everything
  // but that Sync is dropped (the server skips it; a Parse counts as failed). A Sync sent while
  // the server copies in is owed nothing (it ignores it).
  void expect(Expectation&& expectation, std::string_view text, std::string* emit_now);
  void expect(Expectation&& expectation, std::string* emit_now) {
    expect(std::move(expectation), std::string_view(), emit_now);
  }

  // The client's CopyDone or CopyFail was forwarded: a copy-in the server is in ends (its Syncs
  // are answered again), or, its CopyInResponse not come yet, a CopyEnd marks where it ended.
  void on_client_copy_end();

  // Classifies one server message. Synthetic expectations that become due afterwards are
  // appended to `emit`. Asynchronous messages ('N', 'A', 'S') never consume an expectation.
  Outcome on_server_message(char type, std::string* emit);

  // Nothing owed, and no batch left waiting for the Sync that ends an Execute's COPY FROM STDIN
  // (the server ignored the Syncs sent while it copied in: its batch is still open).
  bool idle() const { return queue_.empty() && !sync_due_; }
  // What the server owes first (a message that does not complete it leaves it there); null: nothing.
  const Expectation* head() const { return queue_.empty() ? nullptr : &queue_.front(); }
  int owed_ready_for_query() const { return ready_owed_; }
  bool in_copy() const { return copy_; }
  // Parses that failed or were skipped after an error (the session forgets what they defined).
  const std::vector<FailedParse>& failed_parses() const { return failed_parses_; }
  void clear_failed_parses() { failed_parses_.clear(); }
  void reset();

 private:
  Outcome complete_head();
  void skip_to_sync();
  void emit_due_synthetics(std::string* emit);
  void enter_copy_in();
  bool ready_owed_after_head() const;
  void emit_synthetic(const Expectation& e, std::string_view text, std::string* emit);
  void note_if_parse(const Expectation& dropped, std::string& text);

  ExpectationQueue queue_;
  // An error came before the Sync of its batch was forwarded: the server ignores every message
  // up to that Sync, so what is expected for them until then is owed nothing.
  bool skipping_ = false;
  int ready_owed_ = 0;
  bool copy_ = false;
  // A CopyInResponse answered the head (an Execute or a Query) and the client has not ended its
  // copy: the server ignores Sync meanwhile, so the client's Syncs are owed nothing.
  bool client_copy_ = false;
  // That head was an Execute and no Sync after the copy's end is expected yet: the server waits
  // for one (its batch is open) though nothing is owed.
  bool sync_due_ = false;
  std::vector<FailedParse> failed_parses_;
};

}  // namespace sw::session
