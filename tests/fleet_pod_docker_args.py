#!/usr/bin/python3
"""The `docker run` of a DaemonSet's pod: what a kubelet with the docker engine would start for
deploy/kubernetes/daemonset.yaml, derived from the manifest, never written by hand, so the
image is tested exactly as the pod spec runs it (tests/fleet_image_test.sh).

Every field of the pod and container spec is either translated or named below as having no
effect on a single container (scheduling, API access); any other field is an error, so a field
added to the manifest cannot be silently left out of the test.

usage: fleet_pod_docker_args.py DAEMONSET_YAML NODE_NAME [--relocate FROM=TO] [--name N] [--label L]
Prints the docker run argv, one per line (no value holds a newline: checked).
--relocate moves a node directory (hostPath, mountPath and env values alike, so a directory
stays mounted at its own path) for a test that must not write to the node's real one.
"""
import argparse
import re
import sys

import yaml

# Pod fields with no effect on what runs in the container, and why.
POD_NOT_TRANSLATED = {
    "tolerations": "scheduling only",
    "automountServiceAccountToken": "docker mounts no service account token anyway",
    "enableServiceLinks": "no Services' variables under docker anyway",
}
CONTAINER_NOT_TRANSLATED = {
    "name": "the container's name in the pod",
    "imagePullPolicy": "no registry here: the image is built locally (--pull never)",
}


def fail(msg):
    sys.exit(f"fleet_pod_docker_args: {msg}")


def docker_args(pod, node_name, relocate):
    def moved(value):
        for src, dst in relocate:
            if value == src or value.startswith(src + "/"):
                return dst + value[len(src):]
        return value

    args = []
    for key, value in pod.items():
        if key in POD_NOT_TRANSLATED or key in ("containers", "volumes"):
            continue
        if key == "hostNetwork" and value:
            args += ["--network", "host", "--uts", "host"]  # the kubelet shares UTS with the host network
        elif key == "hostPID" and value:
            args += ["--pid", "host"]
        elif key == "hostIPC" and value:
            args += ["--ipc", "host"]
        elif key in ("hostNetwork", "hostPID", "hostIPC"):
            pass
        elif key == "terminationGracePeriodSeconds":
            args += ["--stop-timeout", str(value)]
        else:
            fail(f"pod field {key} has no docker translation here: add one")
    if len(pod["containers"]) != 1:
        fail("one container expected")
    [c] = pod["containers"]
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    entry, after_image = None, []
    for key, value in c.items():
        if key in CONTAINER_NOT_TRANSLATED or key in ("image",):
            continue
        if key == "command":
            entry, after_image = value[0], value[1:] + after_image
        elif key == "args":
            pass  # after the command, below
        elif key == "env":
            for e in value:
                if "value" in e:
                    args += ["-e", f"{e['name']}={moved(e['value'])}"]
                elif e.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") == "spec.nodeName":
                    args += ["-e", f"{e['name']}={node_name}"]
                else:
                    fail(f"env {e['name']}: only value and fieldRef spec.nodeName are translated")
        elif key == "securityContext":
            for sk, sv in value.items():
                if sk == "runAsUser":
                    args += ["--user", str(sv)]
                elif sk == "privileged":
                    args += ["--privileged"] if sv else []
                elif sk == "allowPrivilegeEscalation":
                    args += [] if sv else ["--security-opt", "no-new-privileges"]
                elif sk == "capabilities":
                    args += [a for cap in sv.get("add", []) for a in ("--cap-add", cap)]
                    args += [a for cap in sv.get("drop", []) for a in ("--cap-drop", cap)]
                else:
                    fail(f"securityContext.{sk} has no docker translation here: add one")
        elif key == "resources":
            limits = value.get("limits", {})
            for lk, lv in limits.items():
                if lk != "memory":
                    fail(f"resources.limits.{lk} has no docker translation here: add one")
                m = re.fullmatch(r"(\d+)(Mi|Gi)", lv)
                if not m:
                    fail(f"memory limit {lv}: Mi or Gi expected")
                args += ["--memory", m.group(1) + {"Mi": "m", "Gi": "g"}[m.group(2)]]
            # requests only steer scheduling
        elif key == "volumeMounts":
            for m in value:
                extra = set(m) - {"name", "mountPath", "readOnly"}
                if extra:
                    fail(f"volumeMount {m['name']}: {sorted(extra)} not translated")
                v = volumes[m["name"]]
                if "hostPath" not in v:
                    fail(f"volume {m['name']}: only hostPath is translated")
                spec = f"type=bind,src={moved(v['hostPath']['path'])},dst={moved(m['mountPath'])}"
                if m.get("readOnly"):
                    spec += ",readonly"
                args += ["--mount", spec]
        else:
            fail(f"container field {key} has no docker translation here: add one")
    if entry is not None:
        args += ["--entrypoint", entry]
    return args + ["--pull", "never", c["image"]] + after_image + c.get("args", [])


def host_paths(pod, relocate):
    """The hostPath volumes: path and type, as the kubelet would check or create them."""
    out = []
    for v in pod.get("volumes", []):
        hp = v.get("hostPath")
        if hp:
            path = hp["path"]
            for src, dst in relocate:
                if path == src or path.startswith(src + "/"):
                    path = dst + path[len(src):]
            out.append((hp.get("type", ""), path))
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("daemonset")
    p.add_argument("node_name")
    p.add_argument("--relocate", action="append", default=[])
    p.add_argument("--name")
    p.add_argument("--label", action="append", default=[])
    p.add_argument("--host-paths", action="store_true", help="print TYPE PATH of each hostPath instead")
    a = p.parse_args()
    relocate = [tuple(r.split("=", 1)) for r in a.relocate]
    docs = [d for d in yaml.safe_load_all(open(a.daemonset)) if d and d.get("kind") == "DaemonSet"]
    if len(docs) != 1:
        fail(f"{a.daemonset}: one DaemonSet expected, found {len(docs)}")
    pod = docs[0]["spec"]["template"]["spec"]
    if a.host_paths:
        for t, path in host_paths(pod, relocate):
            print(t, path)
        return
    args = ["--detach"] + (["--name", a.name] if a.name else [])
    args += [x for label in a.label for x in ("--label", label)]
    args += docker_args(pod, a.node_name, relocate)
    if any("\n" in x for x in args):
        fail("a value holds a newline")
    print("\n".join(args))


if __name__ == "__main__":
    main()
