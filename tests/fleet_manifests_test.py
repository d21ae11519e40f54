#!/usr/bin/python3
"""The Kubernetes manifests of the fleet audit (deploy/kubernetes/) against the Kubernetes API.

No cluster runs here, so each object is checked against the API's own models as the Kubernetes
Python client (Debian's python3-kubernetes) declares them: every key must be a field of its
model (an unknown or misspelt field fails, which ApiClient.deserialize alone would drop
silently), every value of the field's type, every required field present (the client's own
validation, run by deserializing into V1DaemonSet, V1RuntimeClass, ...). The Sonobuoy plugin
is checked the same way: its `spec` as a V1Container, its `podSpec` as a V1PodSpec, its
`sonobuoy-config` against the keys Sonobuoy reads. Then what the fleet needs of them: the
plugin's container is the DaemonSet's, the image is this version's, the probe runs in the
RuntimeClasses the kubectl profiles name.

usage: fleet_manifests_test.py SOURCE_DIR [--self-test]
--self-test also proves the checker fails: a misspelt field, a wrong type and a missing
required field must each be reported (run by ctest alongside the real check).
"""
import copy
import json
import os
import re
import sys
from pathlib import Path

try:
    import yaml
    import kubernetes.client as k8s
    from kubernetes.client import ApiClient
except ImportError as missing:
    # 77: ctest's skip (SKIP_RETURN_CODE), a failure where every prerequisite is required.
    why = f"{missing.name} not installed (scripts/setup.sh --with k8s: python3-kubernetes python3-yaml)"
    if os.environ.get("SANDPROBE_REQUIRE_BACKENDS") == "1":
        sys.exit(f"fleet_manifests_test: FAIL: {why} (SANDPROBE_REQUIRE_BACKENDS=1)")
    print(f"fleet_manifests_test: SKIP: {why}", file=sys.stderr)
    sys.exit(77)

# apiVersion/kind -> the client's model name.
MODELS = {
    ("v1", "Namespace"): "V1Namespace",
    ("apps/v1", "DaemonSet"): "V1DaemonSet",
    ("node.k8s.io/v1", "RuntimeClass"): "V1RuntimeClass",
    ("v1", "ServiceAccount"): "V1ServiceAccount",
}
PRIMITIVES = {"str": str, "int": int, "bool": bool, "float": (int, float)}
# What Sonobuoy reads of a plugin definition's `sonobuoy-config` (its plugin reference).
SONOBUOY_CONFIG_KEYS = {"driver", "plugin-name", "result-format", "result-type", "description",
                        "source-url", "skip-cleanup", "result-files"}


def strict_errors(value, type_name, where):
    """Every key of `value` a field of `type_name`, every value of its declared type."""
    if value is None:
        return []
    m = re.fullmatch(r"list\[(.+)\]", type_name)
    if m:
        if not isinstance(value, list):
            return [f"{where}: a list expected, got {type(value).__name__}"]
        return [e for i, v in enumerate(value) for e in strict_errors(v, m.group(1), f"{where}[{i}]")]
    m = re.fullmatch(r"dict\(([^,]+), (.+)\)", type_name)
    if m:
        if not isinstance(value, dict):
            return [f"{where}: a map expected, got {type(value).__name__}"]
        return [e for k, v in value.items() for e in strict_errors(v, m.group(2), f"{where}.{k}")]
    if type_name in PRIMITIVES:
        ok = isinstance(value, PRIMITIVES[type_name]) and not (type_name == "int" and isinstance(value, bool))
        return [] if ok else [f"{where}: {type_name} expected, got {value!r}"]
    if type_name == "object":  # IntOrString, Quantity, RawExtension
        return [] if isinstance(value, (str, int, float, dict)) else [f"{where}: unexpected {value!r}"]
    model = getattr(k8s, type_name)
    if not isinstance(value, dict):
        return [f"{where}: a {type_name} object expected, got {type(value).__name__}"]
    by_json_key = {json_key: attr for attr, json_key in model.attribute_map.items()}
    errors = []
    for key, v in value.items():
        if key not in by_json_key:
            errors.append(f"{where}.{key}: no such field in {type_name}")
            continue
        errors += strict_errors(v, model.openapi_types[by_json_key[key]], f"{where}.{key}")
    return errors


class _Response:  # what ApiClient.deserialize reads: a response's body
    def __init__(self, body):
        self.data = json.dumps(body)


def model_errors(obj, model_name, where):
    """Unknown fields and wrong types, then the client's own checks (required fields)."""
    errors = strict_errors(obj, model_name, where)
    if not errors:
        try:
            ApiClient().deserialize(_Response(obj), model_name)
        except (ValueError, TypeError) as e:
            errors.append(f"{where}: {model_name}: {e}")
    return errors


def manifest_errors(doc, where):
    key = (doc.get("apiVersion"), doc.get("kind"))
    if key not in MODELS:
        return [f"{where}: no model for apiVersion {key[0]!r} kind {key[1]!r}"]
    return model_errors(doc, MODELS[key], where)


def plugin_errors(plugin, where):
    errors = []
    extra = set(plugin) - {"sonobuoy-config", "spec", "podSpec", "extra-volumes"}
    errors += [f"{where}.{k}: not a key of a Sonobuoy plugin definition" for k in sorted(extra)]
    config = plugin.get("sonobuoy-config") or {}
    errors += [f"{where}.sonobuoy-config.{k}: not a key Sonobuoy reads"
               for k in sorted(set(config) - SONOBUOY_CONFIG_KEYS)]
    if config.get("driver") not in ("DaemonSet", "Job"):
        errors.append(f"{where}.sonobuoy-config.driver: DaemonSet or Job, not {config.get('driver')!r}")
    errors += model_errors(plugin.get("spec"), "V1Container", f"{where}.spec")
    errors += strict_errors(plugin.get("podSpec"), "V1PodSpec", f"{where}.podSpec")
    return errors


def load_all(path):
    try:
        return [d for d in yaml.safe_load_all(path.read_text()) if d is not None]
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        at = f":{mark.line + 1}:{mark.column + 1}" if mark else ""
        sys.exit(f"fleet_manifests_test: FAIL: {path}{at}: not YAML: {getattr(e, 'problem', e)}")


def fleet_errors(src):
    kdir = src / "deploy/kubernetes"
    errors, objects = [], {}
    for path in sorted(kdir.glob("*.yaml")):
        for i, doc in enumerate(load_all(path)):
            where = f"{path.relative_to(src)}[{i}]"
            if "sonobuoy-config" in doc:
                errors += plugin_errors(doc, where)
                objects["plugin"] = doc
            else:
                errors += manifest_errors(doc, where)
                objects.setdefault(doc["kind"], []).append(doc)
    if errors:
        return errors
    # What the fleet needs of them.
    [ds] = objects["DaemonSet"]
    pod = ds["spec"]["template"]["spec"]
    [container] = pod["containers"]
    version = re.search(r"project\(sandprobe VERSION (\S+)", (src / "CMakeLists.txt").read_text()).group(1)
    if container["image"] != f"sandprobe/sandprobe:{version}":
        errors.append(f"the DaemonSet runs {container['image']}, not this version's sandprobe/sandprobe:{version}")
    plugin = objects["plugin"]
    # The plugin's container is the DaemonSet's but for Sonobuoy's results directory.
    def comparable(c):
        c = copy.deepcopy(c)
        c.pop("name")
        c["env"] = [e for e in c["env"] if e["name"] != "SANDPROBE_RESULTS_DIR"]
        c["volumeMounts"] = [m for m in c["volumeMounts"] if m["name"] != "results"]
        return c
    if comparable(plugin["spec"]) != comparable(container):
        errors.append("the Sonobuoy plugin's container differs from the DaemonSet's")
    for field in ("hostNetwork", "hostPID", "hostIPC", "tolerations", "volumes"):
        if plugin["podSpec"].get(field) != pod.get(field):
            errors.append(f"the Sonobuoy plugin's podSpec.{field} differs from the DaemonSet's")
    if not any(m["mountPath"] == "/tmp/sonobuoy/results" for m in plugin["spec"]["volumeMounts"]):
        errors.append("the Sonobuoy plugin does not mount its results directory")
    # Every hostPath directory at the path it has on the node (docker resolves -v on the node).
    volumes = {v["name"]: v for v in pod["volumes"]}
    for m in container["volumeMounts"]:
        host = volumes[m["name"]].get("hostPath")
        if host and host["path"] != m["mountPath"]:
            errors.append(f"hostPath {host['path']} is mounted at {m['mountPath']}, not at its own path")
    # The kubectl profiles run the probe in the RuntimeClasses declared here.
    classes = {rc["metadata"]["name"] for rc in objects["RuntimeClass"]}
    for profile in sorted((src / "sandboxes/examples").glob("kubectl-runtimeclass-*.json")):
        text = re.sub(r"^\s*//.*$", "", profile.read_text(), flags=re.M)
        overrides = json.loads(json.loads(text)["vars"]["overrides"])
        wanted = overrides["spec"]["runtimeClassName"]
        if wanted not in classes:
            errors.append(f"{profile.name} runs RuntimeClass {wanted}, not declared in runtimeclasses.yaml")
        if profile.stem != f"kubectl-runtimeclass-{wanted}":
            errors.append(f"{profile.name} runs RuntimeClass {wanted}: its name says otherwise")
    if len(classes) < 3:
        errors.append(f"RuntimeClasses {sorted(classes)}: runc, gvisor and kata expected")
    return errors


def self_test(src):
    """The checker itself must fail on a wrong field, a wrong type, a missing required field."""
    [ds] = [d for d in load_all(src / "deploy/kubernetes/daemonset.yaml") if d["kind"] == "DaemonSet"]
    cases = []
    bad = copy.deepcopy(ds); bad["spec"]["template"]["spec"]["hostPid"] = True
    cases.append(("misspelt hostPID", bad, "hostPid: no such field"))
    bad = copy.deepcopy(ds); bad["spec"]["template"]["spec"]["containers"][0]["volumeMounts"][0]["readonly"] = True
    cases.append(("misspelt readOnly", bad, "readonly: no such field"))
    bad = copy.deepcopy(ds); bad["spec"]["template"]["spec"]["hostNetwork"] = "yes"
    cases.append(("hostNetwork a string", bad, "bool expected"))
    bad = copy.deepcopy(ds); del bad["spec"]["selector"]
    cases.append(("no selector", bad, "selector"))
    bad = copy.deepcopy(ds); del bad["spec"]["template"]["spec"]["containers"][0]["name"]
    cases.append(("a container without name", bad, "name"))
    failures = []
    for label, doc, expected in cases:
        errors = manifest_errors(doc, "self-test")
        if not any(expected in e for e in errors):
            failures.append(f"self-test: {label}: expected an error with {expected!r}, got {errors}")
    if manifest_errors(ds, "self-test"):
        failures.append("self-test: the unchanged DaemonSet does not pass")
    # The docker translation of the pod (tests/fleet_pod_docker_args.py, which fleet_image_test
    # runs) refuses a field it does not translate, rather than leaving it out of the test.
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import fleet_pod_docker_args as translate
    pod = ds["spec"]["template"]["spec"]
    argv = translate.docker_args(pod, "node-1", [])
    for expected in (["--pid", "host"], ["--network", "host"], ["--ipc", "host"], ["--cap-add", "SYS_PTRACE"]):
        if not any(argv[i:i + 2] == expected for i in range(len(argv))):
            failures.append(f"self-test: the DaemonSet's docker run lacks {expected}: {argv}")
    for where, field in ((pod, "shareProcessNamespace"), (pod["containers"][0], "stdin"),
                         (pod["containers"][0]["securityContext"], "readOnlyRootFilesystem")):
        where[field] = True
        try:
            translate.docker_args(pod, "node-1", [])
            failures.append(f"self-test: the docker translation accepted {field}, which it does not translate")
        except SystemExit as refused:
            if field not in str(refused.code):
                failures.append(f"self-test: refusing {field} said {refused.code!r}")
        del where[field]
    return failures


def main():
    src = Path(sys.argv[1]).resolve()
    errors = fleet_errors(src)
    if "--self-test" in sys.argv[2:]:
        errors += self_test(src)
    for e in errors:
        print(f"fleet_manifests_test: FAIL: {e}", file=sys.stderr)
    if errors:
        return 1
    print("fleet_manifests_test: ok", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
