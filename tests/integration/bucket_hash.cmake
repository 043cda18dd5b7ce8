# Fragment for the bucket-hash integration suite (bucket_hash_pg_test.cc, TEST_SUITE
# "bucket_hash_pg", docs/architecture.md §6.2): links the router's bucket hash and its SQL twin into
# integration_tests. tests/integration/CMakeLists.txt includes every *.cmake fragment here after
# integration_tests exists and before the per-suite loop (an explicit
#   include(${CMAKE_CURRENT_SOURCE_DIR}/bucket_hash.cmake)
# at that point does the same). Without it the test file compiles to a placeholder case.
if(TARGET sw_router AND TARGET integration_tests)
  target_link_libraries(integration_tests PRIVATE sw_router)
  target_compile_definitions(integration_tests PRIVATE SHARDWIRE_IT_BUCKET_HASH=1)
endif()
# Seconds for the suite: ~650 000 rows loaded and compared (about 15 s in the ASan build) plus
# cluster start-up.
set(it_timeout_bucket_hash_pg 300)
