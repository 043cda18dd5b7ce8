// Kubernetes deployment files (deploy/), checked offline, without a cluster:
//  * each kustomize overlay renders with `kubectl kustomize` and its objects pass
//    deploy/validate.py (required fields per kind, selectors, ports, probes on /live and /ready,
//    the grace period covering the drain); the validator rejects a broken object;
//  * the ConfigMap's shardwire.yaml passes `shardwire check` with the Secret's variables in the
//    environment, and names the missing variable without them;
//  * the Helm chart passes the validator's chart check (Helm is not packaged: no rendering).
#include <unistd.h>

#include <map>
#include <string>

#include "it_test.h"

#ifndef SHARDWIRE_SOURCE_DIR
#define SHARDWIRE_SOURCE_DIR "."
#endif

using namespace it;

namespace {

std::string source(const std::string& rel) { return std::string(SHARDWIRE_SOURCE_DIR) + "/" + rel; }

std::string kubectl() { return access("/usr/bin/kubectl", X_OK) == 0 ? "/usr/bin/kubectl" : "kubectl"; }

// `kubectl kustomize` of an overlay, rendered once per run (a render takes seconds).
const CommandResult& render(const std::string& overlay) {
  static std::map<std::string, CommandResult> rendered;
  auto it = rendered.find(overlay);
  if (it == rendered.end())
    it = rendered
             .emplace(overlay,
                      run_command({kubectl(), "kustomize", source("deploy/kubernetes/overlays/" + overlay)},
                                  "", 60s))
             .first;
  return it->second;
}

CommandResult validate(const std::string& rendered) {
  return run_command({"python3", source("deploy/validate.py"), "-"}, rendered, 30s);
}

// The shardwire.yaml of the rendered ConfigMap.
std::string config_of(const std::string& rendered) {
  CommandResult r =
      run_command({"python3", "-c",
                   "import sys, yaml\n"
                   "for o in yaml.safe_load_all(sys.stdin):\n"
                   "    if o and o['kind'] == 'ConfigMap': sys.stdout.write(o['data']['shardwire.yaml'])\n"},
                  rendered, 30s);
  return r.out;
}

}  // namespace

TEST_SUITE("kubernetes") {
  TEST_CASE("every overlay renders with kubectl kustomize and its objects validate") {
    for (const char* overlay : {"example", "production"}) {
      CAPTURE(overlay);
      const CommandResult& rendered = render(overlay);
      REQUIRE_MESSAGE(
          rendered.exit_code == 0,
          "kubectl is Debian's kubernetes-client (scripts/install-deps.sh): " << rendered.describe());
      CommandResult checked = validate(rendered.out);
      CHECK_MESSAGE(checked.exit_code == 0, checked.describe());
      CHECK(contains(checked.out, "ConfigMap, Deployment, PodDisruptionBudget"));
      CHECK(contains(checked.out, "Service, ServiceMonitor"));
    }
    // The example overlay generates the Secret the Deployment reads its passwords from.
    const CommandResult& example = render("example");
    CHECK(contains(example.out, "kind: Secret"));
    CHECK(contains(validate(example.out).out, "Secret"));
  }

  TEST_CASE("the validator rejects a readiness probe off /ready and a grace period shorter than the drain") {
    const CommandResult& rendered = render("example");
    REQUIRE(rendered.exit_code == 0);
    std::string broken = rendered.out;
    size_t at = broken.find("path: /ready");
    REQUIRE(at != std::string::npos);
    broken.replace(at, 12, "path: /metrics");
    at = broken.find("terminationGracePeriodSeconds: 35");
    REQUIRE(at != std::string::npos);
    broken.replace(at, 33, "terminationGracePeriodSeconds: 10");
    CommandResult checked = validate(broken);
    CHECK(checked.exit_code == 1);
    CHECK_MESSAGE(contains(checked.err, "readinessProbe must GET /ready, got /metrics"), checked.err);
    CHECK_MESSAGE(
        contains(checked.err, "terminationGracePeriodSeconds 10 < preStop 5 s + shutdown_timeout 25 s"),
        checked.err);
  }

  TEST_CASE("the ConfigMap's config passes shardwire check with the Secret's variables, not without") {
    std::string bin = shardwire_binary();
    REQUIRE_MESSAGE(!bin.empty(), "shardwire is not built");
    const CommandResult& rendered = render("production");
    REQUIRE(rendered.exit_code == 0);
    std::string config = config_of(rendered.out);
    REQUIRE(contains(config, "${SHARDWIRE_DB_PASSWORD}"));
    TempDir dir;
    std::string path = dir.file("shardwire.yaml");
    write_file(path, config);

    CommandOptions with_secrets;
    with_secrets.env = {
        {"SHARDWIRE_APP_PASSWORD", "a"}, {"SHARDWIRE_ADMIN_PASSWORD", "b"}, {"SHARDWIRE_DB_PASSWORD", "c"}};
    CommandResult ok = run_command({bin, "check", "--config", path}, "", 15s, with_secrets);
    CHECK_MESSAGE(ok.exit_code == 0, ok.describe());

    CommandOptions without;
    without.unset_env = {"SHARDWIRE_APP_PASSWORD", "SHARDWIRE_ADMIN_PASSWORD", "SHARDWIRE_DB_PASSWORD"};
    CommandResult missing = run_command({bin, "check", "--config", path}, "", 15s, without);
    CHECK(missing.exit_code == 78);
    CHECK_MESSAGE(contains(missing.err, "refers to ${SHARDWIRE_APP_PASSWORD}, which is not set"),
                  missing.describe());
  }

  TEST_CASE("the Helm chart passes the chart check (Chart.yaml, values, templates)") {
    CommandResult checked = run_command(
        {"python3", source("deploy/validate.py"), "--chart", source("deploy/helm/shardwire")}, "", 30s);
    CHECK_MESSAGE(checked.exit_code == 0, checked.describe());
    // A template that uses a value values.yaml lacks is caught.
    TempDir dir;
    CommandResult copied = run_command({"cp", "-r", source("deploy/helm/shardwire"), dir.path()}, "", 30s);
    REQUIRE(copied.exit_code == 0);
    std::string chart = dir.path() + "/shardwire";
    write_file(chart + "/templates/extra.yaml", "replicas: {{ .Values.noSuchValue }}\n");
    CommandResult broken = run_command({"python3", source("deploy/validate.py"), "--chart", chart}, "", 30s);
    CHECK(broken.exit_code == 1);
    CHECK(contains(broken.err, ".Values.noSuchValue is not in values.yaml"));
  }
}
