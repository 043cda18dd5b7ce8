// MigrationRunner: after the flip (the rollback window, ROLLBACK MIGRATION, cleanup) and CANCEL.
#include "common/log.h"
#include "mover/catch_up_stream.h"
#include "mover/migration_runner.h"
#include "mover/shard_ops.h"

namespace sw::mover {

using catalog_rows::MigrationState;

namespace {
constexpr auto kWindowPoll = std::chrono::milliseconds(1000);
}

// Changes the target takes for the moved buckets stream back to the source, so a rollback loses
// nothing. The window ends at rollback_expires_at, when the reverse slot holds back more WAL
// than mover.rollback_wal_budget, or on EXPIRE ROLLBACK; ROLLBACK MIGRATION cuts back over.
Status MigrationRunner::keep_rollback_window(catalog_rows::Migration& m) {
  if (!forward_slot_dropped_) {
    if (Status s = finish_flip(m, /*reverse=*/false); !s) return s;
    forward_slot_dropped_ = true;
  }
  if (Status s = start_stream(m, /*reverse=*/true); !s) return s;
  bookkeep(record_lag());
  // A failing reverse stream keeps the window open (its error shown) but is no reason to keep it
  // past its end: the checks below still close it. A cutover back waits until the stream is
  // healthy rather than stall writes for an attempt that cannot succeed.
  Status stream_error = note_stream_error(m);
  if (m.rollback_requested) {
    if (!m.retry_due || !stream_error) {
      sleep_for(kWindowPoll);
      return Status::ok();
    }
    auto result = cut_over(m, /*reverse=*/true);
    if (!result) return result.status();
    return Status::ok();
  }
  std::string why;
  if (m.expire_requested)
    why = "EXPIRE ROLLBACK";
  else if (m.rollback_seconds_left <= 0)
    why = "mover.rollback_window passed";
  if (why.empty()) {
    auto target = connect_shard(m.target);
    if (!target) return target.status();
    auto retained = slot_retained_bytes(target->get(), m.reverse_slot);
    if (!retained) return retained.status();
    if (*retained > static_cast<uint64_t>(config_->mover.rollback_wal_budget))
      why = "the reverse slot holds " + std::to_string(*retained) +
            " bytes of WAL, over mover.rollback_wal_budget";
  }
  if (why.empty()) {
    sleep_for(kWindowPoll);
    return Status::ok();
  }
  LOG_INFO("mover: migration %lld: rollback window closed (%s); cleaning up %s", (long long)id_, why.c_str(),
           m.source.c_str());
  stop_stream();
  auto target = connect_shard(m.target);
  if (!target) return target.status();
  if (Status s = drop_slot(target->get(), m.reverse_slot); !s) return s;
  if (Status s = drop_publication(target->get(), m.reverse_publication); !s) return s;
  return catalog::close_rollback_window(catalog_.get(), id_);
}

// The source's copy of the moved buckets goes, in throttled batches; its fence stays.
Status MigrationRunner::clean(catalog_rows::Migration& m) {
  auto source = connect_shard(m.source);
  if (!source) return source.status();
  auto deleted = delete_bucket_rows(source->get(), config_->sharding.tables, bucket_set(m),
                                    config_->mover.copy_rows_per_sec);
  if (!deleted) return deleted.status();
  // The applied positions of both streams are history now.
  if (Status s = drop_progress(source->get(), -id_); !s) return s;
  auto target = connect_shard(m.target);
  if (!target) return target.status();
  if (Status s = drop_progress(target->get(), id_); !s) return s;
  LOG_INFO("mover: migration %lld done: %llu rows deleted from %s", (long long)id_,
           (unsigned long long)*deleted, m.source.c_str());
  return catalog::mark_state(catalog_.get(), id_, MigrationState::Done);
}

// ROLLBACK MIGRATION flipped the buckets back: the target's copy goes (it stays fenced there).
Status MigrationRunner::finish_rollback(catalog_rows::Migration& m) {
  auto target = connect_shard(m.target);
  if (!target) return target.status();
  if (Status s = drop_slot(target->get(), m.reverse_slot); !s) return s;
  if (Status s = drop_publication(target->get(), m.reverse_publication); !s) return s;
  auto deleted = delete_bucket_rows(target->get(), config_->sharding.tables, bucket_set(m),
                                    config_->mover.copy_rows_per_sec);
  if (!deleted) return deleted.status();
  if (Status s = drop_progress(target->get(), id_); !s) return s;
  auto source = connect_shard(m.source);
  if (!source) return source.status();
  if (Status s = drop_progress(source->get(), -id_); !s) return s;
  LOG_INFO("mover: migration %lld rolled back: buckets on %s again", (long long)id_, m.source.c_str());
  return catalog::mark_rolled_back(catalog_.get(), id_);
}

// CANCEL MIGRATION before the flip: nothing of it may stay behind (slot, publication, copied rows).
Status MigrationRunner::cancel(catalog_rows::Migration& m) {
  stop_stream();
  if (m.state == MigrationState::CuttingOver) {
    if (Status s = undo_cutover(m, false); !s) return s;
  }
  auto source = connect_shard(m.source);
  if (!source) return source.status();
  if (Status s = drop_slot(source->get(), slot_name(false)); !s) return s;
  if (Status s = drop_publication(source->get(), slot_name(false)); !s) return s;
  auto target = connect_shard(m.target);
  if (!target) return target.status();
  if (Status s = drop_slot(target->get(), slot_name(true)); !s) return s;
  if (Status s = drop_publication(target->get(), slot_name(true)); !s) return s;
  auto deleted = delete_bucket_rows(target->get(), config_->sharding.tables, bucket_set(m), 0);
  if (!deleted) return deleted.status();
  if (Status s = drop_progress(target->get(), id_); !s) return s;
  LOG_INFO("mover: migration %lld cancelled; %llu copied rows removed from %s", (long long)id_,
           (unsigned long long)*deleted, m.target.c_str());
  return catalog::mark_state(catalog_.get(), id_, MigrationState::Cancelled);
}

}  // namespace sw::mover
