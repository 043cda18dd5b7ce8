# The mover killed at each step (mover_faults_test.cc -> "mover_faults"): nine cases, each with its
# own catalog, 3 shards and a restarted proxy.
set(it_timeout_mover_faults 900)
