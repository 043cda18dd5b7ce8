// MigrationRunner: live verification (docs/architecture.md §8.5), in steady catch-up before a
// cutover, while writes go on. Rounds of counts and checksums on both shards, each over the
// buckets not known equal yet (VerifiedBuckets), so that the cutover, with writes held, scans only
// the buckets the stream changed after the last round.
#include <algorithm>
#include <set>

#include "common/log.h"
#include "mover/catch_up_stream.h"
#include "mover/copier.h"
#include "mover/migration_runner.h"
#include "mover/shard_ops.h"
#include "mover/verifier.h"

namespace sw::mover {

namespace {
constexpr auto kRoundCatchUpWait = std::chrono::milliseconds(2000);
// Rounds per attempt: each one scans what changed during the one before; under a steady write load
// they stop shrinking after two or three.
constexpr int kMaxRounds = 4;
// Attempts whose rounds found a difference the stream did not explain before the cutover's own
// verification is left to decide (it aborts the cutover when the difference is real).
constexpr int kLiveVerifyRounds = 3;
}  // namespace

// True when the cutover may start: the buckets left unverified are those that writes in flight
// kept changing, or a difference seen kLiveVerifyRounds times that the cutover's verification,
// with the source fenced, decides.
bool MigrationRunner::live_verified(const catalog_rows::Migration& m) {
  auto source = round_connection(m.source);
  auto target = round_connection(m.target);
  if (!source || !target) return false;
  size_t scanned_before = SIZE_MAX;
  for (int round = 0; round < kMaxRounds; ++round) {
    verified_.changed(stream_->take_changed_buckets());
    const size_t left = verified_.unverified().list().size();
    // Nothing left to scan, or the writes change buckets as fast as a round scans them.
    if (left == 0 || left >= scanned_before) break;
    scanned_before = left;
    auto agreed = live_round(*source, *target, m);
    if (!agreed) {
      LOG_INFO("mover: migration %lld: live verification: %s; trying again", (long long)id_,
               agreed.status().message.c_str());
      return false;
    }
    if (!*agreed) {  // a difference the stream did not explain: repeated by the next attempt
      if (++live_mismatch_rounds_ < kLiveVerifyRounds) return false;
      break;
    }
  }
  live_mismatch_rounds_ = 0;
  // The target's sequences move past the moved rows now, before any write waits; the cutover moves
  // them again only for the buckets it scans, those changed after this (docs/architecture.md §8.6).
  if (Status s = advance_sequences(*target, config_->sharding.tables, bucket_set(m)); !s) {
    LOG_INFO("mover: migration %lld: moving the sequences on %s: %s; trying again", (long long)id_,
             m.target.c_str(), s.message.c_str());
    return false;
  }
  LOG_DEBUG("mover: migration %lld: live verification: %zu of %zu bucket(s) known equal", (long long)id_,
            verified_.known_equal(), verified_.size());
  return true;
}

// One round over the buckets not known equal. A difference in a bucket that the stream changed
// meanwhile (it applied its changes, up to a WAL position read after both scans) is writes in
// flight: the bucket stays unverified. False when a bucket differs that the stream did not change.
Result<bool> MigrationRunner::live_round(PGconn* source, PGconn* target, const catalog_rows::Migration& m) {
  const BucketSet scan = verified_.unverified();
  auto mismatched = compare_shards(source, target, config_->sharding.tables, scan);
  if (!mismatched) return mismatched.status();
  auto lsn = current_wal_lsn(source);
  if (!lsn) return lsn.status();
  if (!stream_->wait_until_processed(*lsn, kRoundCatchUpWait))
    return Status::server("55000", "the stream did not reach " + lsn_text(*lsn) + " in time");
  const std::set<uint32_t> during = stream_->take_changed_buckets();
  verified_.round(scan, *mismatched, during);
  auto unexplained = std::find_if(mismatched->begin(), mismatched->end(),
                                  [&](uint32_t bucket) { return during.count(bucket) == 0; });
  if (unexplained == mismatched->end()) {
    if (!mismatched->empty())
      LOG_INFO(
          "mover: migration %lld: live verification: %zu bucket(s) differ, each changed by the stream "
          "while the scans ran; verifying them again",
          (long long)id_, mismatched->size());
    return true;
  }
  LOG_INFO(
      "mover: migration %lld: live verification: bucket %u differs between %s and %s although the stream did "
      "not change it while the scans ran (%zu bucket(s) differ in all); %s",
      (long long)id_, *unexplained, m.source.c_str(), m.target.c_str(), mismatched->size(),
      live_mismatch_rounds_ + 1 >= kLiveVerifyRounds ? "the cutover's verification decides"
                                                     : "verifying again");
  return false;
}

}  // namespace sw::mover
