// Sanity checks on the messages a server sends while it answers a client's requests, for the
// ones the proxy relays without otherwise looking inside. A server that fails them is broken or
// hostile; the caller drops it (it is never reused) and the client gets an 08P01 error instead
// of bytes its driver cannot make sense of. Pure: no I/O, no logging.
//
//  * ErrorResponse ('E') must decode and carry a SQLSTATE ('C') of five characters [0-9A-Z]:
//    PostgreSQL always sends one, and clients, the proxy's metrics and fence handling key on it.
//  * RowDescription ('T') must decode: column count, then per column a name and 18 bytes.
//  * DataRow ('D'): column count, then per column an int32 length (-1 is NULL) and that many
//    bytes, nothing left over; and, when a RowDescription of this result came before it, exactly
//    its column count.
//
// A DataRow belongs to the RowDescription before it when only DataRows and asynchronous
// messages (NoticeResponse, ParameterStatus, NotificationResponse) came in between; any other
// message ends that result. An Execute without a Describe gets DataRows with no RowDescription:
// their count cannot be checked, their structure still is.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "common/status.h"

namespace sw::wire {

class ServerMessageCheck {
 public:
  // Ok, or an 08P01 Status::server saying what was wrong (no message contents: they may be data).
  Status on_message(char type, std::string_view body) {
    return passes(type, body) ? Status::ok() : failure(type, body);
  }
  // The same checks, without a Status: true when the message passes. A failure leaves the check
  // as it was, and failure() then says why (08P01).
  bool passes(char type, std::string_view body) {
    switch (type) {
      case 'D':
      case 'T':
      case 'E': return passes_parsed(type, body);
      case 'N':
      case 'S':
      case 'A': return true;  // asynchronous: may come in the middle of a result
      default: columns_.reset(); return true;
    }
  }
  Status failure(char type, std::string_view body) const;
  // A new server connection, or a new user of one: forget the current result.
  void reset() { columns_.reset(); }

 private:
  // passes() of the messages it parses (DataRow, RowDescription, ErrorResponse).
  bool passes_parsed(char type, std::string_view body);

  std::optional<uint16_t> columns_;  // of the result in progress, when its RowDescription was seen
};

// True for five characters of [0-9A-Z], the shape of every SQLSTATE.
bool is_sqlstate(std::string_view code);

}  // namespace sw::wire
