// What an UPDATE that moves rows between shards (docs/architecture.md §6.3, "Updates that move
// rows") does after every shard ran its part: each shard deleted the matching rows of its own
// buckets and answered the new rows, each led by the new key's bucket, then every column, then a
// marker column (router::KeyMove), then the client's RETURNING items. KeyMovePlan reads those
// rows, gives the client only its own items, and says what each leg runs next in the same
// transaction: an INSERT of the new rows whose bucket its shard owns (values as the shards printed
// them, read back by the same types' input functions under the same settings).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "router/router.h"

namespace sw::session {

class KeyMovePlan {
 public:
  // `leg_shards[i]`: the directory's shard index of leg i.
  KeyMovePlan(std::shared_ptr<const router::KeyMove> move, std::vector<int> leg_shards);

  // The leg's RowDescription body; `client` gets the client's RowDescription (whole message), or
  // nothing when the client asked for no RETURNING.
  Status on_row_description(size_t leg, std::string_view body, std::string& client);
  // The leg's DataRow body; `client` gets the client's DataRow (whole message), or nothing.
  Status on_data_row(size_t leg, std::string_view body, std::string& client);
  // What leg `leg` runs next (one simple Query's SQL), empty when no row goes there.
  std::string next_statement(size_t leg) const;
  bool moves_any() const { return !rows_.empty(); }

 private:
  struct Row {
    size_t to = 0;  // the leg whose shard owns its new bucket
    std::vector<std::optional<std::string>> values;
  };
  size_t leg_of_shard(int shard) const;

  std::shared_ptr<const router::KeyMove> move_;
  std::vector<int> leg_shards_;
  std::vector<std::string> columns_;  // the table's columns, quoted, from the first RowDescription
  size_t marker_ = 0;                 // the marker column's position (0: no RowDescription yet)
  std::vector<Row> rows_;
  size_t held_bytes_ = 0;
};

}  // namespace sw::session
