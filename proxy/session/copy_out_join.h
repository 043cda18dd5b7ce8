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
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace sw::session {

class CopyOutJoin {
 public:
  // `shards` names the legs' shards for errors (by leg; may be empty).
  CopyOutJoin(size_t legs, bool skip_headers, std::vector<std::string> shards = {})
      : legs_(legs), skip_headers_(skip_headers), shards_(std::move(shards)) {}

  // One copy message of leg `leg` ('H', 'd' or 'c'; `frame` the whole message, `body` its
  // payload); appends the client's bytes to `out`. A server fault when the legs disagree on the
  // format or a binary stream is not one PostgreSQL writes; 42804 (session/result_shape.h) when a
  // leg's CopyOutResponse has another column count than the first leg's, before any of its rows.
  Status on_message(size_t leg, char type, std::string_view frame, std::string_view body, std::string& out);

 private:
  Status copy_data(size_t leg, std::string_view frame, std::string_view body, std::string& out);
  Status copy_done(size_t leg, std::string& out);
  std::string shard(size_t leg) const;

  size_t legs_;
  bool skip_headers_;
  std::vector<std::string> shards_;
  uint16_t columns_ = 0;  // the first leg's column count
  bool response_sent_ = false;
  bool binary_ = false;
  size_t leg_ = 0;            // the leg whose messages are being fed
  bool leg_started_ = false;  // it sent a CopyData already
  std::string held_;          // binary: the leg's last CopyData payload, not yet written
};

}  // namespace sw::session
