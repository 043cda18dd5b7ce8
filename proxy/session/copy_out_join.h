// The COPY ... TO STDOUT answers of several shards joined into the one copy the client gets
// (docs/architecture.md §5.6). Pure: no I/O, never throws. The shards' answers are fed leg after
// leg (every message of leg 0, then of leg 1, ...), each its CopyOutResponse, CopyData messages and
// CopyDone; the result is the bytes for the client:
//  * one CopyOutResponse (the first leg's), one CopyDone (after the last leg's data);
//  * text and CSV: every row as sent; with `skip_headers` (CSV HEADER) the first CopyData of each
//    leg after the first (its header line) is dropped;
//  * binary: one header (the first leg's; later legs' 19-byte headers and their extensions are
//    cut from their first CopyData) and one trailer (the last leg's; the others' two-byte -1
//    trailers are cut from their last CopyData, which is held back until the leg's CopyDone).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "common/status.h"

namespace sw::session {

class CopyOutJoin {
 public:
  CopyOutJoin(size_t legs, bool skip_headers) : legs_(legs), skip_headers_(skip_headers) {}

  // One copy message of leg `leg` ('H', 'd' or 'c'; `frame` the whole message, `body` its
  // payload); appends the client's bytes to `out`. A server fault when the legs disagree on the
  // format or a binary stream is not one PostgreSQL writes.
  Status on_message(size_t leg, char type, std::string_view frame, std::string_view body, std::string& out);

 private:
  Status copy_data(size_t leg, std::string_view frame, std::string_view body, std::string& out);
  Status copy_done(size_t leg, std::string& out);

  size_t legs_;
  bool skip_headers_;
  bool response_sent_ = false;
  bool binary_ = false;
  size_t leg_ = 0;            // the leg whose messages are being fed
  bool leg_started_ = false;  // it sent a CopyData already
  std::string held_;          // binary: the leg's last CopyData payload, not yet written
};

}  // namespace sw::session
