# Resource bounds suite (resource_bounds_test.cc, TEST_SUITE "resource_bounds"): its helpers
# (a libpq login swarm, a result stream checker and RSS sampler, stalled raw logins, proxy
# restarts and a bystander client) live in resource_bounds/ and are compiled into
# integration_tests here. tests/integration/CMakeLists.txt includes every *.cmake fragment after
# integration_tests exists.
if(TARGET integration_tests)
  target_sources(integration_tests PRIVATE
    ${CMAKE_CURRENT_SOURCE_DIR}/resource_bounds/client_swarm.cc
    ${CMAKE_CURRENT_SOURCE_DIR}/resource_bounds/result_stream.cc
    ${CMAKE_CURRENT_SOURCE_DIR}/resource_bounds/suite_support.cc)
endif()
# Seconds (about 45 s alone on 2 cores): 10 000 logins and a query each, a 1 GiB result (read
# slowly, then fast), a burst of 2 000 SCRAM logins, stalled logins timed out; plus cluster start-up.
set(it_timeout_resource_bounds 300)
