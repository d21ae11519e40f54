#!/usr/bin/env python3
"""A sandbox that lies: used as a profile's `run` by tests/liars_test.cc.

    liar.py MODE COMMAND...

Runs COMMAND (a real sandbox command line ending in the probe and its arguments, as a profile
expands it), then forwards the probe's output, changed the way MODE says, and ends the way MODE
says. Every mode models something a hostile or broken sandbox can do to the frames it relays;
the test asserts that none of them turns into a pass for the checks it lied about.
"""
import json
import os
import signal
import subprocess
import sys

FRAME = "@@sandprobe "


def nonce_of(argv):
    return argv[argv.index("--nonce") + 1]


def split(line):
    """(nonce, payload dict) of a frame line, or None for noise."""
    if not line.startswith(FRAME):
        return None
    nonce, _, payload = line[len(FRAME):].partition(" ")
    return nonce, json.loads(payload)


def frame(nonce, payload):
    return FRAME + nonce + " " + json.dumps(payload, separators=(",", ":"))


def innocent(fact):
    """The denial a liar would like the harness to believe instead of `fact`."""
    out = {k: v for k, v in fact.items() if k in ("family", "path", "variant", "via")}
    out.update({"ok": False, "step": "open", "errno": "EACCES"})
    return out


def transform(mode, lines, nonce):
    out = []
    for line in lines:
        parsed = split(line)
        if parsed is None:
            out.append(line)
            continue
        _, payload = parsed
        if mode == "foreign-nonce":
            out.append(frame("0" * len(nonce), payload))
        elif mode == "fact-nonce" and "nonce" in payload:
            payload["nonce"] = "x"
            out.append(frame(nonce, payload))
        elif mode == "deny-then-leak" and payload.get("family", "").startswith("fs.") and payload.get("ok"):
            out.append(frame(nonce, innocent(payload)))
            out.append(line)
        elif mode == "hide-canary-hash" and payload.get("family", "").startswith("fs.") and payload.get("ok") \
                and "canary" in payload.get("path", ""):
            out.append(frame(nonce, innocent(payload)))
            where = "elsewhere-" + payload.get("variant", "read")
            out.append(frame(nonce, {"family": "note", "path": where, "sha256": payload.get("sha256", "")}))
        elif mode == "deny-canary" and payload.get("family", "").startswith("fs.") \
                and "canary" in payload.get("path", ""):
            # Every trace of the canary read goes: the path's fact says EACCES, and its hash is
            # in no fact. Only the host's own watch of the canary can tell.
            out.append(frame(nonce, innocent(payload)))
        elif mode == "leak-then-die" and payload.get("done"):
            break
        else:
            out.append(line)
    return out


def launch_key(command):
    """The families of a launch, in order: the same launch in another run has the same key."""
    families, take = [], False
    for i, arg in enumerate(command):
        if arg == "--nonce":
            take = False
        if take:
            families.append(arg)
            take = False
        if arg == "--next" or (i > 0 and command[i - 1] in ("--nonce", "--control") and
                               (i + 1 >= len(command) or command[i + 1] not in ("--control", "--nonce"))):
            take = True
    return "_".join(f.replace("/", "-") for f in families) or "none"


def claim_control_unreadable(lines):
    """The replay's hello says its probe could not open the fresh control, instead of answering it:
    the one excuse that leaves a launch without a control."""
    out = []
    for line in lines:
        parsed = split(line)
        if parsed is not None and parsed[1].get("family") == "hello":
            hello = {k: v for k, v in parsed[1].items() if k != "control_sha256"}
            hello.update({"control_step": "open", "control_errno": "EACCES"})
            line = frame(parsed[0], hello)
        out.append(line)
    return out


def replay(cache_dir, command, nonce, excuse=False):
    """replay:DIR: the first run records each launch's output in DIR; a later run replays it under
    the new launch's nonce, without running the probe (a cached result). replay-excused:DIR also
    claims, in the replayed hello, that the control could not be read."""
    path = os.path.join(cache_dir, launch_key(command))
    if not os.path.exists(path):
        real = subprocess.run(command, stdout=subprocess.PIPE, text=True, errors="replace")
        with open(path, "w") as f:
            json.dump({"nonce": nonce, "out": real.stdout}, f)
        sys.stdout.write(real.stdout)
        sys.exit(real.returncode)
    with open(path) as f:
        recorded = json.load(f)
    out = recorded["out"].replace(FRAME + recorded["nonce"] + " ", FRAME + nonce + " ")
    if excuse:
        out = "\n".join(claim_control_unreadable(out.splitlines())) + "\n"
    sys.stdout.write(out)
    sys.exit(0)


def main():
    mode, command = sys.argv[1], sys.argv[2:]
    nonce = nonce_of(command)
    if mode.startswith("replay:"):
        replay(mode[len("replay:"):], command, nonce)
    if mode.startswith("replay-excused:"):
        replay(mode[len("replay-excused:"):], command, nonce, excuse=True)
    if mode == "delete-canary":
        # The sandbox removes the host's canary before its probe looks: the probe then finds
        # nothing to read and reports a denial. A vanished canary is itself a write to the host.
        for arg in command:
            if os.path.basename(arg).startswith("canary-") and arg.endswith(".txt") and os.path.isfile(arg):
                os.unlink(arg)
    real = subprocess.run(command, stdout=subprocess.PIPE, text=True, errors="replace")
    lines = real.stdout.splitlines()
    sys.stdout.write("\n".join(transform(mode, lines, nonce)) + "\n")
    sys.stdout.flush()
    if mode == "exit-1-after-done" or mode == "leak-then-die":
        sys.exit(1)
    if mode == "signal-after-done":
        os.kill(os.getpid(), signal.SIGKILL)
    sys.exit(real.returncode)


if __name__ == "__main__":
    main()
