// What an UPDATE that moves rows between shards (docs/architecture.md §6.3, "Updates that move
// rows") does after every shard ran its part: each shard deleted the matching rows of its own
// buckets and answered the new rows, each led by the new key's bucket, then every column, then a
// marker column (router::KeyMove), then the client's RETURNING items. KeyMovePlan reads those
// rows, gives the client only its own items, and says what each leg runs next in the same
// transaction: an INSERT of the new rows whose bucket its shard owns (values as the shards printed
// them, read back by the same types' input functions under the same settings).
//
// Every shard first describes the client's own UPDATE (key_move_request.h): that RowDescription,
// as PostgreSQL gives it, is the client's. In the extended protocol (KeyMoveClient) the shards
// answer in text; the client gets its RowDescription (or NoData) only when it described the
// portal, and its RETURNING values in its Bind's result formats, binary ones converted by
// merge::to_binary.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "merge/value.h"
#include "router/router.h"
#include "session/result_shape.h"
#include "wire/row_description.h"

namespace sw::session {

// How the client asked for the statement's answer.
struct KeyMoveClient {
  bool extended = false;                 // [Parse] Bind [Describe portal] Execute Sync
  bool describes = false;                // extended: it sent Describe portal
  std::vector<uint16_t> result_formats;  // extended: its Bind's, for its RETURNING items
  merge::DateReading dates;              // how its session prints dates (binary results)
  // extended: each Execute's row limit, in order (0, or over INT32_MAX: every row); the first
  // takes the first rows, each ends with PortalSuspended when it took its limit, else with its own
  // count (`UPDATE n`), and the Executes after that one with `UPDATE 0`, as PostgreSQL answers a
  // DML portal run to completion by its first Execute.
  std::vector<uint32_t> row_limits;
  std::string portal;  // extended: the portal the Executes name
};

// The RETURNING rows of a move that its client's Executes left at their row limits inside a
// transaction block (PostgreSQL keeps such a portal across Syncs until the transaction ends or
// the client sends another statement): later Executes of the portal are answered from them.
class KeyMoveRest {
 public:
  KeyMoveRest(std::string portal, std::vector<std::string> rows)
      : portal_(std::move(portal)), rows_(std::move(rows)) {}
  const std::string& portal() const { return portal_; }
  // The answer to an Execute of the portal with row limit `max_rows`: the next rows, then
  // PortalSuspended when it took its limit, else `UPDATE <its rows>`.
  std::string execute(uint32_t max_rows);

 private:
  std::string portal_;
  std::vector<std::string> rows_;  // DataRow messages, in order
  size_t next_ = 0;
};

class KeyMovePlan {
 public:
  // `leg_shards[i]`: the directory's shard index of leg i.
  KeyMovePlan(std::shared_ptr<const router::KeyMove> move, std::vector<int> leg_shards,
              KeyMoveClient client = {});

  // A RowDescription body of the leg, whose shard is `shard`: of the client's UPDATE
  // (key_move_request; kept), or of the move's statement, when `client` gets what the client is
  // owed: the client's RowDescription or NoData (whole message), or nothing. 42804 when its
  // columns differ from another shard's (session/result_shape.h).
  Status on_row_description(size_t leg, std::string_view shard, std::string_view body, std::string& client);
  // The NoData that described the client's UPDATE (no RETURNING).
  void on_no_data();
  // The leg's DataRow body; `client` gets the client's DataRow (whole message), or nothing.
  Status on_data_row(size_t leg, std::string_view body, std::string& client);
  // What leg `leg` runs next (one simple Query's SQL), empty when no row goes there.
  std::string next_statement(size_t leg) const;
  bool moves_any() const { return !rows_.empty(); }
  // The client's Executes answered by row limits (KeyMoveClient::row_limits), so the answer ends
  // with portal_end() instead of the statement's tag.
  bool fetched_by_executes() const { return move_->client_returning && !client_.row_limits.empty(); }
  // What ends the client's answer after its rows (fetched_by_executes): CommandComplete of the
  // Execute that took the last rows, `UPDATE 0` for each later one; nothing when every Execute
  // ended with PortalSuspended.
  std::string portal_end() const;
  // The rows no Execute took, when every Execute ended with PortalSuspended (fetched_by_executes);
  // null otherwise.
  std::unique_ptr<KeyMoveRest> take_rest();

 private:
  struct Row {
    size_t to = 0;  // the leg whose shard owns its new bucket
    std::vector<std::optional<std::string>> values;
  };
  size_t leg_of_shard(int shard) const;
  uint16_t format_of(size_t item) const;  // the client's result format of RETURNING item `item`
  Status client_row_description(std::vector<wire::RowField> items);
  // The client's DataRow `row` (whole message) given to its current Execute, with a
  // PortalSuspended after it when that Execute took its limit; cleared when no Execute is left.
  void fetch(std::string& row);

  std::shared_ptr<const router::KeyMove> move_;
  std::vector<int> leg_shards_;
  KeyMoveClient client_;
  std::vector<uint32_t> item_types_;  // the client's RETURNING items' types
  std::string described_;             // what describes the client's portal (RowDescription, NoData)
  std::vector<std::string> columns_;  // the table's columns, quoted, from the first RowDescription
  size_t marker_ = 0;                 // the marker column's position (0: no RowDescription yet)
  ResultShape client_shape_;          // the legs' descriptions of the client's UPDATE
  ResultShape move_shape_;            // the legs' descriptions of the move's statement
  std::vector<Row> rows_;
  size_t held_bytes_ = 0;
  std::vector<std::string> rest_;  // client DataRows after every Execute took its limit
  size_t execute_ = 0;             // the client's Execute that takes the next row
  uint64_t execute_rows_ = 0;      // the rows it took
};

}  // namespace sw::session
