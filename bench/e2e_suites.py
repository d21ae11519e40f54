"""bench/e2e.py --suites: every suite, and the full audit, against its launch floor.

For each profile and each of N runs, for each suite in SUITES order (interleaved):
  wall:       `sandprobe run --sandbox PROFILE --suite suites/SUITE.json --json R` wall time.
  launches:   the sum of launches[].wall_ms of that run's report (every launch the run made:
              probe, inspect, cleanup, sweep, requires, ...).
  floor:      the same launches run again directly, one after the other in the report's order,
              each with exactly the argv the run recorded, timed by this script (the probe's
              workspace is recreated at the recorded path first). A probe's measurement window
              (res.cpu's busy window, res.wall's sleep, the memory/pids/disk/fds climbs) runs
              inside its raw launch, so the floor includes exactly the windows the run asked
              for. Nothing of the harness runs: no witnesses, no planning, no report.
  need floor: the floor without the launches no check needed: a probe launch whose every check
              was skipped by its judge without citing a frame (res.wall above the measured
              range), and that instance's inspect and cleanup. Before plan-time decisions this
              is the floor the run could reach; after, it equals the floor.
  bare:       the same launches again, run one after another by build/bench/bare_harness, a
              static program that does nothing else but write a file the size of the run's
              report: the least any harness that is a process of its own costs (its start, its
              spawns, reading the launches' output, the report's write). The floor leaves these
              out; wall - bare is what sandprobe itself adds (witnesses, plan, judging, report).
  ratio:      wall / floor, wall / need floor and wall / bare.
The full audit is, per run, the sum over the five suites of each column; then medians.
"all in one" is the full audit as users run it since one run takes several suites: one
`--suite all` run (its launches shared across suites), timed and replayed like a suite.
Checks' verdicts are collected across all runs (a set per check id).
--baseline CLI: the same with another CLI (the build from before a change) run right before
each suite's run, so both builds see the same machine load; a table for each.
--baseline-root DIR: the baseline's own checkout; its profiles and suites are then taken from
there (an older CLI may refuse today's profile fields, and today's suites plan checks it lacks):
the A/B then compares each build on what it shipped, and the check counts say how that differs.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

SUITES = ["default", "network", "persistence", "privileges", "resources"]


def timed(argv, **kwargs):
    start = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kwargs)
    return time.perf_counter() - start, done


def unneeded_launches(report):
    """Ids of probe launches whose every check was skipped without a frame, plus the inspect
    and cleanup launches of those launches' instances."""
    by_launch = {}
    for check in report["checks"]:
        by_launch.setdefault(check["evidence"]["launch_id"], []).append(check)
    ids, instances = set(), set()
    for launch in report["launches"]:
        if launch["purpose"] != "probe":
            continue
        checks = by_launch.get(launch["id"], [])
        if checks and all(c["verdict"] == "skip" and not c["evidence"]["frame_indexes"]
                          for c in checks):
            ids.add(launch["id"])
            instances.add(launch["instance"])
    for launch in report["launches"]:
        if launch["purpose"] in ("inspect", "cleanup") and launch["instance"] in instances:
            ids.add(launch["id"])
    return ids


BARE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "build", "bench",
                    "bare_harness")


def fresh_workspace(report):
    workspace = report["witnesses"]["workspace"]
    os.makedirs(workspace, mode=0o777, exist_ok=True)
    os.chmod(workspace, 0o777)
    return workspace


def replay(report):
    """Runs every launch of the report again, directly; returns (floor s, need floor s)."""
    workspace = fresh_workspace(report)
    unneeded = unneeded_launches(report)
    floor = need = 0.0
    try:
        for launch in report["launches"]:
            seconds, _ = timed(launch["argv"])
            floor += seconds
            if launch["id"] not in unneeded:
                need += seconds
    finally:
        subprocess.run(["rm", "-rf", os.path.dirname(workspace)])
    return floor, need


def bare(report, report_bytes, tmp):
    """Runs every launch of the report through bare_harness; returns its wall (s)."""
    argv_file = os.path.join(tmp, "bare.argv")
    with open(argv_file, "wb") as f:
        for launch in report["launches"]:
            for item in [str(len(launch["argv"]))] + launch["argv"]:
                f.write(item.encode() + b"\0")
    workspace = fresh_workspace(report)
    try:
        seconds, done = timed([BARE, argv_file, str(report_bytes), os.path.join(tmp, "bare.json")])
    finally:
        subprocess.run(["rm", "-rf", os.path.dirname(workspace)])
    if done.returncode != 0:
        sys.exit(f"bare_harness exit {done.returncode}: {done.stderr.decode()[-500:]}")
    return seconds


ALL = "all"  # `--suite all`: every suite in one run
COLUMNS = ("wall", "launches", "floor", "need", "bare")  # seconds, per run


def one_suite(cli, root, profile, suite, out):
    suite_arg = ALL if suite == ALL else os.path.join(root, "suites", suite + ".json")
    seconds, done = timed([cli, "run", "--sandbox", profile, "--suite", suite_arg, "--json", out,
                           "--no-color"])
    if done.returncode == 2 and b"expands to no check" in done.stderr:
        return None, {}  # a suite this profile's policy plans nothing of (no limits, no network)
    if done.returncode not in (0, 1, 3):
        sys.exit(f"{profile} {suite}: sandprobe exit {done.returncode}: "
                 f"{done.stderr.decode()[-500:]}")
    with open(out) as f:
        report = json.load(f)
    in_launches = sum(l["wall_ms"] for l in report["launches"]) / 1000.0
    floor, need = replay(report)
    bare_seconds = bare(report, os.path.getsize(out), os.path.dirname(out))
    verdicts = {c["id"]: c["verdict"] for c in report["checks"]}
    return {"wall": seconds, "launches": in_launches, "floor": floor, "need": need, "bare": bare_seconds,
            "n": len(report["launches"]), "checks": len(report["checks"]),
            "name": report["profile"]["name"]}, verdicts


def row(label, checks, n, samples):
    med = {k: statistics.median(s[k] for s in samples) for k in COLUMNS}
    # Ratios are medians of each run's ratio, not ratios of medians; nan where a suite launched
    # nothing (every check set aside as not expressible by the profile's probe).
    def ratio(key):
        values = [s["wall"] / s[key] for s in samples if s[key] > 0]
        return statistics.median(values) if values else float("nan")
    r_floor, r_need, r_launch, r_bare = ratio("floor"), ratio("need"), ratio("launches"), ratio("bare")
    added_ms = statistics.median(s["wall"] - s["bare"] for s in samples) * 1000
    print(f"  {label:<12} {checks:>6} {n:>4} {med['wall']:>8.3f} {med['launches']:>8.3f} "
          f"{med['floor']:>8.3f} {med['need']:>8.3f} {med['bare']:>8.3f} {r_launch:>8.2f} "
          f"{r_floor:>8.2f} {r_need:>8.2f} {r_bare:>8.2f} {added_ms:>8.1f}")


def main(cli, root, runs, profiles, verdicts_out, baseline=None, baseline_verdicts=None, baseline_root=None):
    """With `baseline` (another CLI, e.g. the build from before a change), every suite runs
    with both CLIs one right after the other, so both see the same load; one table each."""
    clis = [("", cli, verdicts_out, root)]
    if baseline:
        clis.insert(0, ("baseline ", baseline, baseline_verdicts, baseline_root or root))
    seen = {label: {} for label, _, _, _ in clis}
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "r.json")
        for profile in profiles:
            samples = {label: {s: [] for s in SUITES + [ALL]} for label, _, _, _ in clis}
            name = os.path.basename(profile)
            for _ in range(runs):
                for suite in SUITES + [ALL]:
                    for label, binary, _, its_root in clis:
                        path = profile if os.path.isabs(profile) else os.path.join(its_root, profile)
                        sample, verdicts = one_suite(binary, its_root, path, suite, out)
                        if sample is None:
                            continue
                        samples[label][suite].append(sample)
                        name = sample["name"]
                        if suite == ALL:  # its checks are the suites' own, compared there
                            continue
                        for check, verdict in verdicts.items():
                            seen[label].setdefault(name, {}).setdefault(suite, {}).setdefault(
                                check, set()).add(verdict)
            for label, _, _, _ in clis:
                print(f"{label}{name}: medians of {runs} interleaved runs (s; w-bare in ms)")
                print(f"  {'suite':<12} {'checks':>6} {'n':>4} {'wall':>8} {'Σlaunch':>8} "
                      f"{'floor':>8} {'needflr':>8} {'bare':>8} {'w/Σl':>8} {'w/floor':>8} "
                      f"{'w/need':>8} {'w/bare':>8} {'w-bare':>8}")
                by_suite = samples[label]
                planned = [suite for suite in SUITES if by_suite[suite]]
                for suite in SUITES:
                    s = by_suite[suite]
                    if not s:
                        print(f"  {suite:<12} (no check planned against this profile's policy)")
                        continue
                    row(suite, s[-1]["checks"], s[-1]["n"], s)
                audit = [{k: sum(by_suite[suite][i][k] for suite in planned) for k in COLUMNS}
                         for i in range(runs)]
                row("full audit", sum(by_suite[s][-1]["checks"] for s in planned),
                    sum(by_suite[s][-1]["n"] for s in planned), audit)
                row("all in one", by_suite[ALL][-1]["checks"], by_suite[ALL][-1]["n"], by_suite[ALL])
            sys.stdout.flush()
    for label, _, path, _ in clis:
        if not path:
            continue
        with open(path, "w") as f:
            json.dump({p: {s: {c: sorted(v) for c, v in sorted(checks.items())}
                           for s, checks in suites.items()} for p, suites in seen[label].items()},
                      f, indent=1, sort_keys=True)
