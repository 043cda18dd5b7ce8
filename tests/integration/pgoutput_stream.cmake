# Fragment for the pgoutput stream suite (pgoutput_stream_test.cc, TEST_SUITE "pgoutput_stream"):
# links the wire module's pgoutput decoder into integration_tests. tests/integration/CMakeLists.txt
# includes every *.cmake fragment here after integration_tests exists. Without it the test file
# compiles to a placeholder case.
if(TARGET sw_wire AND TARGET integration_tests)
  target_link_libraries(integration_tests PRIVATE sw_wire)
  target_compile_definitions(integration_tests PRIVATE SHARDWIRE_IT_PGOUTPUT=1)
endif()
