// What a session needs from the worker that owns it (app/worker.h implements it; the unit tests'
// FakeSessionHost too): its loop, config, pools, directory, cancel registry, counters, the admin
// console and two-phase commit decisions.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "pool/pool.h"
#include "router/directory.h"
#include "router/router.h"
#include "session/prepared_statements.h"
#include "session/starting_reads.h"
#include "session/two_phase.h"
#include "stats/traffic.h"
#include "wire/startup.h"

namespace sw::config {
struct Config;
}
namespace sw::net {
class Loop;
class TlsContext;
}  // namespace sw::net

namespace sw::session {

class Session;

// What a session needs from the worker that owns it.
class SessionHost {
 public:
  virtual ~SessionHost() = default;
  virtual net::Loop& loop() = 0;
  virtual const config::Config& config() = 0;
  // The pool serving `user` on shard `shard` (an index into directory()->shards(); -1 = the
  // default shard); nullptr with `error` set if none can.
  virtual pool::Pool* pool_for(const std::string& user, int shard, Status* error) = 0;
  // The bucket directory this worker routes with (null until the catalog delivered one).
  virtual const std::shared_ptr<const router::Directory>& directory() = 0;
  // False once the directory could not be confirmed within sharding.directory_lease.
  virtual bool directory_lease_valid() = 0;
  // False once the directory could not be confirmed within the read lease (shorter): a read of a
  // sharded table then may not go to a shard that lost its buckets.
  virtual bool directory_read_lease_valid() = 0;
  // A shard refused a write with SW001: the directory is stale.
  virtual void request_directory_refresh() = 0;
  virtual const router::RoutingRules& routing_rules() = 0;
  virtual std::shared_ptr<net::TlsContext> server_tls() = 0;
  virtual StatementRegistry& statements() = 0;
  virtual wire::CancelKey register_cancel(Session* session) = 0;
  virtual void unregister_cancel(wire::CancelKey key) = 0;
  // A CancelRequest arrived on a new connection: find the session it names (on any worker).
  // `delivered` runs on this worker's loop once the cancel reached the server (or nothing was
  // running): the client's cancel connection is closed then, as PostgreSQL closes it.
  virtual void forward_cancel(wire::CancelKey key, std::function<void()> delivered) = 0;
  virtual bool shutting_down() = 0;
  // The session is finished; the host deletes it outside the session's own callbacks.
  virtual void session_closed(Session* session) = 0;
  // This worker's counters (logins, latency, backend errors).
  virtual stats::WorkerTraffic& traffic() = 0;
  // PAUSE: a session about to start a transaction asks; if paused, it waits for resume_after_pause().
  virtual bool hold_if_paused(Session* session) = 0;
  // A new transaction writes a MIGRATING bucket: hold it until the directory changes. False when
  // cutover.queue_max requests wait already.
  virtual bool queue_for_cutover(Session* session) = 0;
  virtual void dequeue_from_cutover(Session* session) = 0;
  // Reads through the owned-rows filter that still start legs; a directory is acknowledged only
  // once those routed with an older one have started (StartingReads).
  virtual StartingReads& starting_reads() = 0;
  // The admin console: `reply` gets the answer (without ReadyForQuery) on this thread, once.
  virtual void admin_command(std::string_view sql, std::function<void(std::string)> reply) = 0;
  // Two-phase commit: a new gid (two_phase_gid: this process's instance, the worker, a counter).
  virtual std::string next_two_phase_gid() = 0;
  // Two-phase commit: records 'commit' for `gid` in the catalog (presumed abort; off this thread)
  // and calls `done` on this thread with what the catalog said (`detail`: why it is unknown).
  virtual void decide_commit(const std::string& gid, const std::vector<std::string>& shards,
                             std::function<void(Decision, std::string)> done) = 0;
};

}  // namespace sw::session
