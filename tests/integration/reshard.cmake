# The reshard scenario (reshard_test.cc -> "reshard", reshard_faults_test.cc -> "reshard_faults"):
# a catalog and 5 shards, two shardwire instances, a write workload and a history checker
# (harness/reshard_*.cc, which use the router's bucket hash like the sharded fixture).
if(TARGET sw_router AND TARGET integration_tests)
  target_sources(integration_tests PRIVATE
    ${CMAKE_CURRENT_SOURCE_DIR}/harness/reshard_workload.cc
    ${CMAKE_CURRENT_SOURCE_DIR}/harness/reshard_deployment.cc
    ${CMAKE_CURRENT_SOURCE_DIR}/harness/reshard_checker.cc)
endif()
set(it_timeout_reshard 600)
set(it_timeout_reshard_faults 900)
