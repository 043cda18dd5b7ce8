# Catalog integration suite (catalog_test.cc, TEST_SUITE("catalog")): links sw_catalog into the
# integration test binary. tests/integration/CMakeLists.txt includes every *.cmake fragment here
# after add_executable(integration_tests ...); the explicit equivalent is
#   include(${CMAKE_CURRENT_SOURCE_DIR}/catalog.cmake)
# Without it catalog_test.cc compiles to a single skipped case (it needs sw_catalog's headers).
if(TARGET sw_catalog AND TARGET integration_tests)
  target_link_libraries(integration_tests PRIVATE sw_catalog)
  target_compile_definitions(integration_tests PRIVATE SHARDWIRE_IT_CATALOG=1)
endif()
