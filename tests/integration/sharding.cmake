# Sharding suites (sharding_test.cc -> "sharding", sharding_directory_test.cc ->
# "sharding_directory"): a catalog and 3 shard databases behind shardwire. Adds the harness's
# sharded-deployment helper (harness/sharded_cluster.cc) to sw_it_harness and links the router's
# bucket hash (the tests compute each key's expected shard with sw::router). Included by
# CMakeLists.txt after integration_tests exists. Without sw_router the suites compile to a
# skipped placeholder case.
target_sources(sw_it_harness PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/harness/sharded_cluster.cc)
if(TARGET sw_router AND TARGET integration_tests)
  target_link_libraries(integration_tests PRIVATE sw_router)
  target_compile_definitions(integration_tests PRIVATE SHARDWIRE_IT_SHARDING=1)
endif()
# Seconds per suite: cluster start-up, ~4 databases and a proxy per case, pgbench in three modes,
# a catalog cluster stopped and restarted.
set(it_timeout_sharding 600)
set(it_timeout_sharding_directory 600)
