# Mover suite (mover_test.cc -> "mover"): a catalog and 3 shards behind shardwire with the
# bucket mover; uses the sharded fixture (sharding.cmake). Cases run writers during moves.
set(it_timeout_mover 600)
