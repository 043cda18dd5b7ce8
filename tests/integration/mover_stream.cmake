# Fragment for the mover catch-up stream suite (mover_stream_test.cc, TEST_SUITE "mover_stream"):
# links sw_mover (replication connection, applier, catch-up stream) into integration_tests.
# tests/integration/CMakeLists.txt includes every *.cmake fragment here after integration_tests
# exists. Without it the test file compiles to a placeholder case.
if(TARGET sw_mover AND TARGET integration_tests)
  target_link_libraries(integration_tests PRIVATE sw_mover)
  target_compile_definitions(integration_tests PRIVATE SHARDWIRE_IT_MOVER_STREAM=1)
endif()
