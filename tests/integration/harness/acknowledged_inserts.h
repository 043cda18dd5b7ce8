// A writer for the mover fault suites (mover_faults_test.cc, mover_restart_test.cc): INSERTs into
// `orders` through shardwire until told to stop, reconnecting while the proxy or a shard is down,
// keeping (tenant_id, id) of every row whose INSERT was acknowledged.
#pragma once

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "harness/sharded_fixture.h"
#include "it_test.h"

namespace it {

using RowKey = std::pair<long long, long long>;  // (tenant_id, id)

struct InsertLoop {
  std::string note;  // the rows' note column
  std::chrono::milliseconds statement_timeout;
  std::chrono::milliseconds pause{0};  // between INSERTs
};

inline void insert_until(const ShardedFixture& f, const std::vector<long long>& keys, std::atomic<bool>& stop,
                         std::set<RowKey>& acknowledged, std::mutex& mutex, const InsertLoop& loop) {
  PgConn c;
  for (int seq = 0; !stop; ++seq) {
    if (!c) {
      ConnectResult r = connect(f.proxy->conninfo(), std::chrono::seconds(2));
      if (!r.ok) {
        sleep_ms(50);
        continue;
      }
      c = std::move(r.conn);
    }
    long long key = keys[static_cast<size_t>(seq) % keys.size()];
    PgResult r = c.exec("INSERT INTO orders (tenant_id, note) VALUES (" + std::to_string(key) + ", '" +
                            loop.note + "') RETURNING id",
                        loop.statement_timeout);
    if (r.ok() && r.rows() == 1) {
      std::lock_guard<std::mutex> lock(mutex);
      acknowledged.insert({key, std::stoll(r.value())});
    } else if (PQstatus(c.get()) != CONNECTION_OK) {
      c.reset();
    }
    if (loop.pause.count() > 0) sleep_ms(static_cast<int>(loop.pause.count()));
  }
}

}  // namespace it
