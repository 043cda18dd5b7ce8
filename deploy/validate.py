#!/usr/bin/env python3
"""Offline schema check of shardwire's Kubernetes objects (no cluster, no schema download).

    kubectl kustomize deploy/kubernetes/overlays/example | python3 deploy/validate.py -
    python3 deploy/validate.py --chart deploy/helm/shardwire

Rendered objects (YAML documents on stdin or in a file): the fields the API server requires per
kind (apiVersion, kind, metadata.name, and each kind's required spec fields, with their types),
and the references between them: selectors match the pod labels, Service target ports and probe
ports name container ports, ConfigMaps and Secrets that are generated are the ones mounted, the
ServiceMonitor's port is a Service port, the probes are /live and /ready, and
terminationGracePeriodSeconds covers the preStop sleep plus the config's shutdown_timeout.
No packaged JSON-schema validator exists for Kubernetes in Debian 12, hence these checks by kind.

--chart: Helm is not packaged either, so the chart is checked without rendering: Chart.yaml's
required fields, values.yaml parses, every .Values path a template uses exists in values.yaml,
and template actions are balanced. Exit status 1 with one line per problem.
"""
import argparse
import os
import re
import sys

import yaml

PROBLEMS = []


def problem(where, text):
    PROBLEMS.append(f"{where}: {text}")


def get(obj, path, default=None):
    for part in path.split("."):
        if not isinstance(obj, dict) or part not in obj:
            return default
        obj = obj[part]
    return obj


def require(obj, where, path, kind):
    value = get(obj, path)
    if value is None:
        problem(where, f"{path} is required")
    elif not isinstance(value, kind):
        problem(where, f"{path} must be {kind.__name__}, got {type(value).__name__}")
    return value


# Required fields per kind: (path, type), after apiVersion, kind and metadata.name.
REQUIRED = {
    ("apps/v1", "Deployment"): [("spec.selector.matchLabels", dict), ("spec.template.metadata.labels", dict),
                                ("spec.template.spec.containers", list)],
    ("v1", "Service"): [("spec.ports", list), ("spec.selector", dict)],
    ("v1", "ConfigMap"): [("data", dict)],
    ("v1", "Secret"): [],
    ("policy/v1", "PodDisruptionBudget"): [("spec.selector.matchLabels", dict)],
    ("monitoring.coreos.com/v1", "ServiceMonitor"): [("spec.selector.matchLabels", dict), ("spec.endpoints", list)],
}


def duration_seconds(text):
    m = re.fullmatch(r"\s*(\d+)\s*(ms|s|m|h)?\s*", str(text))
    if not m:
        return None
    scale = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, None: 1}[m.group(2)]
    return int(m.group(1)) * scale


def matches(selector, labels):
    return all(labels.get(k) == v for k, v in selector.items())


def check_container(c, where, config_maps, secrets, generated_secrets):
    for path, kind in (("name", str), ("image", str)):
        require(c, where, path, kind)
    ports = {p.get("name"): p for p in c.get("ports", [])}
    for p in c.get("ports", []):
        if not isinstance(p.get("containerPort"), int) or not 0 < p["containerPort"] < 65536:
            problem(where, f"port {p.get('name')}: containerPort must be 1..65535")
    for probe, path in (("livenessProbe", "/live"), ("readinessProbe", "/ready")):
        http = get(c, probe + ".httpGet")
        if http is None:
            problem(where, f"{probe}.httpGet is required")
            continue
        if http.get("path") != path:
            problem(where, f"{probe} must GET {path}, got {http.get('path')}")
        if http.get("port") not in ports and not isinstance(http.get("port"), int):
            problem(where, f"{probe} port {http.get('port')} is not a container port")
    for env in c.get("envFrom", []):
        name = get(env, "secretRef.name")
        if name is not None and generated_secrets and name not in secrets:
            problem(where, f"envFrom secret {name} is not among the rendered Secrets {sorted(secrets)}")
    return ports


def check_deployment(obj, where, objects):
    config_maps = {o["metadata"]["name"]: o for o in objects if o.get("kind") == "ConfigMap"}
    secrets = {o["metadata"]["name"] for o in objects if o.get("kind") == "Secret"}
    selector = get(obj, "spec.selector.matchLabels", {})
    labels = get(obj, "spec.template.metadata.labels", {})
    if not matches(selector, labels):
        problem(where, "spec.selector.matchLabels does not match the pod template's labels")
    replicas = get(obj, "spec.replicas", 1)
    if not isinstance(replicas, int) or replicas < 1:
        problem(where, "spec.replicas must be a positive integer")
    pod = get(obj, "spec.template.spec", {})
    ports = {}
    for c in pod.get("containers", []):
        ports.update(check_container(c, where, config_maps, secrets, bool(secrets)))
    for v in pod.get("volumes", []):
        name = get(v, "configMap.name")
        if name is not None and name not in config_maps:
            problem(where, f"volume {v.get('name')}: ConfigMap {name} is not rendered")
    # The drain must end before the kubelet's SIGKILL.
    grace = pod.get("terminationGracePeriodSeconds", 30)
    pre_stop = 0
    for c in pod.get("containers", []):
        command = get(c, "lifecycle.preStop.exec.command", [])
        if len(command) == 2 and command[0] == "sleep":
            pre_stop = duration_seconds(command[1]) or 0
    for cm in config_maps.values():
        text = get(cm, "data", {}).get("shardwire.yaml")
        if text is None:
            continue
        timeout = duration_seconds(yaml.safe_load(text).get("shutdown_timeout", "25s"))
        if timeout is None or grace < pre_stop + timeout:
            problem(where, f"terminationGracePeriodSeconds {grace} < preStop {pre_stop} s + shutdown_timeout "
                           f"{timeout} s: pods would be killed mid-drain")
    return labels, ports


def check_objects(objects):
    deployments = [o for o in objects if o.get("kind") == "Deployment"]
    kinds = {o.get("kind") for o in objects}
    for kind in ("Deployment", "Service", "ConfigMap", "PodDisruptionBudget", "ServiceMonitor"):
        if kind not in kinds:
            problem("rendered objects", f"no {kind}")
    pods = []
    for obj in objects:
        where = f"{obj.get('kind')}/{get(obj, 'metadata.name')}"
        for path in ("apiVersion", "kind", "metadata.name"):
            require(obj, where, path, str)
        required = REQUIRED.get((obj.get("apiVersion"), obj.get("kind")))
        if required is None:
            problem(where, f"unexpected apiVersion/kind {obj.get('apiVersion')}/{obj.get('kind')}")
            continue
        for path, kind in required:
            require(obj, where, path, kind)
        if not re.fullmatch(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?", str(get(obj, "metadata.name", ""))):
            problem(where, "metadata.name is not a DNS-1123 name")
    for d in deployments:
        pods.append(check_deployment(d, f"Deployment/{d['metadata']['name']}", objects))
    services = [o for o in objects if o.get("kind") == "Service"]
    for s in services:
        where = f"Service/{s['metadata']['name']}"
        selector = get(s, "spec.selector", {})
        served = [ports for labels, ports in pods if matches(selector, labels)]
        if not served:
            problem(where, "spec.selector matches no Deployment's pods")
        for p in get(s, "spec.ports", []):
            target = p.get("targetPort", p.get("port"))
            if isinstance(target, str) and not any(target in ports for ports in served):
                problem(where, f"targetPort {target} is not a container port")
    for o in objects:
        where = f"{o.get('kind')}/{get(o, 'metadata.name')}"
        if o.get("kind") == "PodDisruptionBudget":
            if not any(matches(get(o, "spec.selector.matchLabels", {}), labels) for labels, _ in pods):
                problem(where, "selector matches no Deployment's pods")
            if get(o, "spec.maxUnavailable") is None and get(o, "spec.minAvailable") is None:
                problem(where, "spec.maxUnavailable or spec.minAvailable is required")
        if o.get("kind") == "ServiceMonitor":
            selected = [s for s in services
                        if matches(get(o, "spec.selector.matchLabels", {}), get(s, "metadata.labels", {}) or {})]
            if not selected:
                problem(where, "selector matches no Service's labels")
            for e in get(o, "spec.endpoints", []):
                if not any(e.get("port") == p.get("name") for s in selected for p in get(s, "spec.ports", [])):
                    problem(where, f"endpoint port {e.get('port')} is not a port of the selected Service")


# ---- the Helm chart, without Helm ----------------------------------------------------------------

def check_chart(chart):
    chart_yaml = yaml.safe_load(open(os.path.join(chart, "Chart.yaml")))
    for key in ("apiVersion", "name", "version"):
        require(chart_yaml, "Chart.yaml", key, str)
    if chart_yaml.get("apiVersion") != "v2":
        problem("Chart.yaml", "apiVersion must be v2 (Helm 3)")
    if not re.fullmatch(r"\d+\.\d+\.\d+([-+].*)?", str(chart_yaml.get("version", ""))):
        problem("Chart.yaml", "version must be SemVer 2")
    values = yaml.safe_load(open(os.path.join(chart, "values.yaml")))
    templates = os.path.join(chart, "templates")
    names = sorted(os.listdir(templates))
    for kind_file in ("deployment.yaml", "service.yaml", "configmap.yaml", "pdb.yaml", "servicemonitor.yaml"):
        if kind_file not in names:
            problem("templates", f"{kind_file} is missing")
    for name in names:
        text = open(os.path.join(templates, name)).read()
        where = f"templates/{name}"
        if text.count("{{") != text.count("}}"):
            problem(where, "unbalanced {{ }}")
        opened = len(re.findall(r"{{-?\s*(if|range|with|define)\b", text))
        closed = len(re.findall(r"{{-?\s*end\b", text))
        if opened != closed:
            problem(where, f"{opened} if/range/with/define but {closed} end")
        for path in re.findall(r"\.Values\.([A-Za-z0-9_.]+)", text):
            if get(values, path.rstrip(".")) is None and not has_path(values, path.rstrip(".")):
                problem(where, f".Values.{path} is not in values.yaml")


def has_path(obj, path):
    for part in path.split("."):
        if not isinstance(obj, dict) or part not in obj:
            return False
        obj = obj[part]
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rendered", nargs="?", help="rendered objects (YAML, '-' for stdin)")
    parser.add_argument("--chart", help="a Helm chart directory to check without rendering")
    args = parser.parse_args()
    if args.rendered:
        stream = sys.stdin if args.rendered == "-" else open(args.rendered)
        objects = [o for o in yaml.safe_load_all(stream) if o]
        check_objects(objects)
        print(f"{len(objects)} objects checked: {', '.join(sorted(o['kind'] for o in objects))}")
    if args.chart:
        check_chart(args.chart)
        print(f"chart {args.chart} checked")
    for p in PROBLEMS:
        print(p, file=sys.stderr)
    return 1 if PROBLEMS else 0


if __name__ == "__main__":
    sys.exit(main())
