// `shardwire init --config FILE`: creates the catalog schema, the per-shard `shardwire` schema
// with fences, and the initial directory. Blocking libpq; run at startup or from the CLI.
//
// Contract (idempotent: a second run changes no data and bumps no version):
//  1. Catalog: sqltext::catalog_schema_sql().
//  2. Directory: when shardwire.buckets is empty, bucket i -> shard i mod N (config order),
//     ACTIVE, version 1. An existing directory is kept; if its bucket count differs from
//     sharding.buckets or it names a shard missing from the config, init refuses (Fault::Config).
//  3. Every shard: sqltext::shard_schema_sql(); when this run creates shardwire.fenced_buckets it fences
//     every bucket the directory does not assign to that shard (owner-side fencing: a shard
//     refuses writes to buckets it does not own; the mover unfences on cutover), each with
//     holds_rows = false unless one of the configured sharded tables there holds a row of it
//     (looked for under a SHARE lock, in the same transaction). Then
//     install_fence for every configured sharded table that exists there; missing tables are
//     skipped with a log line (the proxy installs the fence when it creates the table).
//  4. Ids (docs/architecture.md "Globally unique ids"): in step 2's transaction every configured
//     shard without an id slot gets the next unused one (shardwire.id_slots, never reused); in
//     step 3 the shard records its slot (shardwire.id_slot; a shard holding another slot is
//     refused) and every sequence of a configured sharded table there is bounded to the slot's
//     range before its fence is installed. smallint/integer sequences and a shard whose
//     max_prepared_transactions is 0 get a warning (report and log).
//  5. Reference tables (sharding.reference_tables): every other shard's copy is brought up to the
//     default shard's (the rows it lacks inserted, one transaction per table and shard), then
//     compared (count + checksum); a copy holding rows the default shard lacks stops init
//     (55000), a table missing on a shard is reported and skipped (create it through shardwire, then
//     run init again).
// Each step runs in one transaction holding an advisory lock, so concurrent inits serialize.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "config/config.h"

namespace sw::catalog {

struct ShardInitReport {
  std::string name;
  bool schema_created = false;              // fenced_buckets did not exist before this run
  int64_t buckets_fenced = 0;               // fences added by this run
  std::vector<std::string> fences;          // "<table>: created|updated|unchanged"
  std::vector<std::string> missing_tables;  // configured tables that do not exist on the shard
  uint32_t id_slot = 0;                     // its slot for globally unique ids
  std::vector<std::string> sequences;       // "<table>: sequence <name> <type> <first>..<last>: <action>"
  std::vector<std::string> warnings;        // int4 sequences, max_prepared_transactions = 0
};

struct InitReport {
  bool catalog_created = false;    // shardwire.buckets did not exist before this run
  bool directory_created = false;  // this run inserted the initial directory
  uint64_t directory_version = 0;
  uint32_t buckets = 0;
  std::vector<std::string> shard_names;
  std::vector<uint32_t> buckets_per_shard;  // parallel to shard_names
  std::vector<ShardInitReport> shards;
  std::map<std::string, uint32_t> id_slots;   // every slot the catalog records, by shard name
  std::vector<std::string> reference_tables;  // "<table> on <shard>: <what init did>"
};

// Runs the steps above. Errors name the catalog or shard (never a DSN).
Result<InitReport> initialize(const config::Config& config);

// A few human-readable lines describing the report.
std::string format_report(const InitReport& report);

// initialize() and print format_report() to stdout; the error Status otherwise.
Status run_init(const config::Config& config);

}  // namespace sw::catalog
