# Mover operations suite (mover_ops_test.cc -> "mover_ops"): drain-timeout aborts, ROLLBACK,
# CANCEL, PAUSE/RESUME MIGRATION, version columns, SHOW MIGRATIONS and VERIFY BUCKET; a deployment
# (catalog, 3 shards, proxy) per case, some with a throttled copy.
set(it_timeout_mover_ops 600)
