# Deployment files suites (deploy_files_test.cc). CMakeLists.txt registers the file's first suite,
# `integration.deploy_files` (compose file, compose config, Dockerfile, Grafana dashboard); the
# second, `integration.prometheus` (a real Prometheus evaluating every dashboard expression against
# a real shardwire), is registered here. Included after integration_tests exists.
set(it_timeout_deploy_files 180)
if(TARGET integration_tests)
  add_test(NAME integration.prometheus
           COMMAND integration_tests --test-suite=prometheus --duration=true --no-path-filenames=true)
  set_tests_properties(integration.prometheus PROPERTIES LABELS integration TIMEOUT 300)
endif()
