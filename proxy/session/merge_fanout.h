// A read that spans shards and needs their rows combined (a scatter plan from the router, run by
// a merge::Merger), outside any transaction, simple query protocol or (use_extended) one
// extended-protocol batch:
//  * every shard runs the plan's SQL at once (one leg per shard; a read split by key list: only
//    the shards of its keys, each its own SQL, see plan_targets), after a query of its
//    collations: the merge compares text by bytes, so a merge that orders or groups text is
//    refused (0A000) when a compared column's collation (its COLLATE, the table column it is, or
//    what its expression reads) does not allow that (merge/collation.h);
//  * each leg's DataRows go to the merger; a leg whose rows the merger holds up to
//    fanout.max_rows_buffered stops being read (TCP holds the rest), and a client that reads
//    slowly (its output over the high-water mark) stops the merge, hence every leg;
//  * every shard's RowDescription must match the first one's (42804 otherwise,
//    session/result_shape.h);
//  * the client gets one RowDescription, the merged DataRows, one "SELECT n", ReadyForQuery (an
//    Execute row limit: PortalSuspended; inside the client's transaction the portal may go on,
//    keep_portal);
//  * an error on a leg (or a merge error) goes to the client once; the legs still running are
//    cancelled and their servers closed (a cancelled server is never reused: a late
//    CancelRequest must not hit another client's query). So are legs whose rows are no longer
//    needed once LIMIT is reached.
// On the session's engine (keep_servers: inside the client's transaction block, or in session
// pooling; docs/architecture.md §5.6) the read borrows the transaction's legs, and no leg is
// cancelled or closed: a leg whose rows are no longer needed is read to its end and its rows
// dropped, and at the end every leg it kept is handed back to the session, with what it still owes
// when the read failed.
// An answer policy on the leg engine (session/leg_engine.h): k-way merge.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "merge/merger.h"
#include "session/fanout.h"
#include "session/leg_engine.h"
#include "session/result_shape.h"
#include "session/starting_reads.h"

namespace sw::session {

class MergeFanout : public LegEngine::Runner {
 public:
  struct Counters {
    uint64_t rows_in = 0;   // rows the shards sent
    uint64_t rows_out = 0;  // rows the client got
  };

  // `client_full` says whether the client's output is over its high-water mark; call
  // on_client_drained() when it drops. `done` is called once, after ReadyForQuery was written.
  MergeFanout(const std::vector<Fanout::Target>& targets, merge::MergePlan plan, ServerState session_state,
              const config::Fanout& limits, std::function<void(std::string_view)> write_client,
              std::function<bool()> client_full, std::function<void(const Counters&)> done);
  ~MergeFanout() override;
  MergeFanout(const MergeFanout&) = delete;
  MergeFanout& operator=(const MergeFanout&) = delete;

  // The targets a plan runs on: all of `targets` (one per directory shard, in shard order), or
  // for a read split by key (plan.shard_statements) only those shards, in the statements' order
  // (leg i runs shard_statements[i]).
  static std::vector<Fanout::Target> plan_targets(std::vector<Fanout::Target> targets,
                                                  const merge::MergePlan& plan);

  // The extended protocol ([Parse] Bind [Describe portal] Execute Sync, before start()):
  // every leg runs the plan's SQL as the unnamed statement with the client's parameters, its
  // results in text; the client gets ParseComplete (when it sent Parse), BindComplete, the
  // RowDescription (when it sent Describe), the merged rows, CommandComplete, ReadyForQuery.
  // Result columns it asks in binary are converted (merge::to_binary; a type without a
  // conversion fails the statement with 0A000 before any row).
  struct Extended {
    std::vector<uint32_t> types;      // the Parse's parameter type OIDs
    std::string parameters;           // the Bind's parameter format codes and values, as sent
    std::vector<int> result_formats;  // the Bind's result format codes (none, one for all, or one each)
    bool parse_complete = false;
    bool describe = false;
    // The Execute's row limit (0: all rows): after that many rows the client gets PortalSuspended
    // instead of CommandComplete, and the legs still running are stopped.
    uint32_t max_rows = 0;
  };
  // How the client's DateStyle and TimeZone print dates: how the merge reads them.
  void set_dates(merge::DateReading dates) { merger_.set_dates(dates); }
  void use_extended(Extended extended);

  // Runs on the legs of `legs`, the session's engine (before start()): `targets` by leg
  // (Session::transaction_targets). A shard the transaction holds a leg on reads on that leg's
  // server (nothing sent before the read but the session's settings when it lacks them); another
  // gets a new leg of `legs`, sent the target's `begin` first (which joins it to the client's
  // transaction). No leg is stopped early; at the end `hand_back` gets every leg it kept (the
  // read's error, if any, decides what the session does with them). Inside the client's
  // transaction (`in_transaction`) the client's ReadyForQuery is the session's, not written here,
  // and every leg stays; outside it (session pooling) a new leg goes back to its pool once read to
  // its end.
  void keep_servers(std::vector<LegEngine::Target> targets, bool in_transaction,
                    LegEngine::HandBack hand_back, LegEngine& legs);

  // Inside the client's transaction (after use_extended and keep_servers, before start();
  // docs/architecture.md §5.6): at the Execute's row limit the merge writes PortalSuspended and
  // waits (parked(), its legs not read) instead of ending; `parked` is called then, told whether
  // the merge's answer ended the client's batch (its first Execute's, whose Sync the session
  // answers). resume() runs the portal's next Execute: more rows, then PortalSuspended again or
  // CommandComplete with that Execute's row count (no ReadyForQuery: the client's Sync that
  // follows is the session's). close_portal() ends it without a word to the client: the legs'
  // remaining rows are read and dropped, and an error there fails the transaction (handed back).
  void keep_portal(std::function<void(bool answers_sync)> parked);
  void resume(uint32_t max_rows);
  void close_portal();
  bool parked() const { return parked_; }
  // Whether the session owes the client's batch a ReadyForQuery after this merge's answer.
  bool answers_sync() const { return !parked_once_; }

  // As Fanout::watch_start: registered in `reads` until every leg's server answered the read
  // itself (after the collation query).
  void watch_start(StartingReads& reads, uint64_t version);
  void start();
  void on_client_drained();
  bool finished() const { return finished_; }

 private:
  // Where a leg's answer is (the engine keeps the leg and its ReadyForQuery count): the
  // collation query's result comes first, then the read's; Done once its last ReadyForQuery
  // was read, or the leg was stopped (no server any more).
  enum class Answer : uint8_t { Collations, Rows, Completed, Done };

  // The one-row query every leg runs first: the shard's collations (merge/collation.h).
  std::string collation_query() const;

  // LegEngine::Runner
  // The client's CancelRequest goes to every leg still running, unless the portal is parked
  // (nothing runs for the client): their 57014 reaches the client once; the servers are closed,
  // as after any leg error.
  bool cancellable(size_t leg) const override { return !parked_ && !done(leg); }
  void on_leg_server(size_t leg, std::string prologue) override;
  bool on_leg_message(size_t leg, const LegEngine::Message& message) override;
  void on_leg_ready(size_t leg) override;
  bool on_leg_refused(size_t leg, const Status& why) override;
  void on_leg_caught_up(size_t leg) override;
  void on_leg_violation(size_t leg, const Status& why) override;
  void on_leg_lost(size_t leg, const Status& why) override;
  void on_no_server(const Status& why) override;

  // Whether the leg's next message waits (the merge holds its share of rows, the portal is
  // parked, or a held leg ended its statement).
  bool waits(size_t index) const;
  Status handle_message(size_t index, char type, std::string_view frame, std::string_view body);
  Status describe(std::string_view frame, std::string_view body);
  void write_description(std::string_view row_description);
  Status plan_formats();
  Status encode_row(std::string& out, const merge::Row& row) const;
  const std::string& leg_sql(size_t index) const;
  Status collations_message(size_t index, char type, std::string_view body);
  bool done(size_t index) const { return answers_[index] == Answer::Done; }
  Status check_collations() const;
  void pump();
  void stop_leg(size_t index, bool clean);
  void fail(const Status& why);
  void finish();
  // keep_servers: the legs still running once every row went out are read to their end.
  bool drain_held_legs();
  void hand_back_held();
  void park();

  // By leg: what its server is sent after the session settings, where its answer is, and its
  // shard's collations (from the collation query's result).
  std::vector<std::string> messages_;
  std::vector<Answer> answers_;
  std::vector<merge::ShardCollations> collations_;
  std::vector<LegEngine::Target> engine_targets_;
  std::unique_ptr<LegEngine> engine_;     // made by start()
  StartingReads* watch_reads_ = nullptr;  // watch_start's, applied by start()
  uint64_t watch_version_ = 0;
  merge::Merger merger_;
  merge::MergePlan plan_;
  std::optional<Extended> extended_;
  std::vector<uint32_t> client_types_;  // the client's columns (binary results only)
  std::vector<bool> binary_columns_;    // empty: every column in text
  merge::ShardColumns shard_columns_;   // the first RowDescription's names and origins
  ResultShape shape_;                   // every shard's columns are the first one's
  ServerState session_state_;
  size_t max_rows_buffered_;
  std::function<void(std::string_view)> write_client_;
  std::function<bool()> client_full_;
  std::function<void(const Counters&)> done_;
  bool described_ = false;
  bool errored_ = false;
  bool finished_ = false;
  bool pumping_ = false;
  bool suspended_ = false;  // the Execute's row limit was reached
  HeldLegs held_;           // keep_servers: on the session's engine, handed back at the end
  bool draining_ = false;   // every row went out; held legs are read to their end, rows dropped
  Status error_ = Status::ok();
  std::function<void(bool)> on_parked_;  // keep_portal's
  bool parked_ = false;                  // suspended, waiting for the portal's next Execute
  bool parked_once_ = false;
  bool closing_ = false;              // close_portal: nothing more reaches the client
  uint64_t row_limit_ = 0;            // rows_out_ at which the current Execute suspends (0: none)
  uint64_t rows_before_execute_ = 0;  // rows_out_ when the current Execute began
  uint64_t rows_out_ = 0;
};

}  // namespace sw::session
