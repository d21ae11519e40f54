#!/usr/bin/env python3
"""End-to-end timing of the default suite against real backends, in one run.

For each profile it measures, interleaved, N times:
  suite: `sandprobe run --sandbox PROFILE` wall time (load, witnesses, preflight, launches,
         cleanup, sweep, evaluate, reports)
  raw:   the same probe launch argv, taken from the report, run directly (the launch floor);
         and, timed apart, the profile's cleanup of that instance (docker rm -f): a launch that
         leaves nothing behind costs raw + cleanup, the second ratio printed
  naive: bench/naive_harness.sh doing the same checks with one sandbox launch per check (each
         with its own instance name and the profile's cleanup after it)
and prints medians, the launch counts, suite / (probe launches x raw), the same against
raw + cleanup, and naive / suite.

Usage: bench/e2e.py [--runs N] [--no-naive] [PROFILE...]   (default: bwrap-strict docker-hardened)

--no-naive leaves the naive baseline out: one launch per check is minutes for a profile whose
launch costs seconds, e.g. the microVM under TCG:
  bench/e2e.py --runs 3 --no-naive sandboxes/bwrap-strict.json sandboxes/docker-hardened.json \
      sandboxes/microvm.json

--suites: every suite (suites/*.json), the full audit (the five suites summed, per run) and the
full audit in one `--suite all` run, per profile, interleaved with the raw launches
(bench/e2e_suites.py says how the floor is computed).
--verdicts FILE (with --suites): also write {profile: {suite: {check id: [verdicts seen]}}};
bench/compare_verdicts.py compares two such files.
--baseline CLI [--baseline-verdicts FILE] (with --suites): an A/B on a busy machine: the other
build runs each suite right before this one, and both get a table (and a verdict file):
  bench/e2e.py --suites --runs 3 --baseline /tmp/before/cli --baseline-verdicts b.json \
      --verdicts a.json sandboxes/bwrap-strict.json sandboxes/docker-hardened.json
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# SANDPROBE_BENCH_CLI: another build of the CLI (e.g. a copy kept from before a change).
CLI = os.environ.get("SANDPROBE_BENCH_CLI", os.path.join(ROOT, "build", "sandprobe"))


def timed(argv, **kwargs):
    start = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kwargs)
    return time.perf_counter() - start, done


def naive_checks(report):
    """One "FAMILY ARG..." line per check, as a per-check harness would launch them."""
    lines = []
    for check in report["checks"]:
        family, target = check["family"], check["resolved_target"]
        if family == "fs.alias":
            lines.append(f"fs.alias --scratch /tmp {target}")
        elif family == "env.secret":
            lines.append("env.secret SANDPROBE_CANARY_")
        else:
            lines.append(f"{family} {target}")
    return "\n".join(lines) + "\n"


def cleanup_argv(report, instance):
    """The profile's cleanup for `instance` as the run expanded it (docker rm -f NAME), or []."""
    found = [l["argv"] for l in report["launches"]
             if l["purpose"] == "cleanup" and l["instance"] == instance]
    if len(found) > 1:
        sys.exit(f"{instance}: naive_harness.sh runs one cleanup command, the profile has {len(found)}")
    return found[0] if found else []


def run_naive(argv, report, workspace, instance):
    prefix = argv[:argv.index("--nonce")]
    os.makedirs(workspace, mode=0o777, exist_ok=True)
    os.chmod(workspace, 0o777)
    options = []
    if instance and instance in " ".join(prefix):
        options = ["--instance", instance]
        cleanup = cleanup_argv(report, instance)
        if cleanup:
            options += ["--cleanup"] + cleanup + ["--"]
    seconds, done = timed([os.path.join(ROOT, "bench", "naive_harness.sh")] + options + prefix,
                          input=naive_checks(report).encode())
    subprocess.run(["rm", "-rf", os.path.dirname(workspace)])
    return seconds, int(done.stdout.decode().strip() or 0)


def measure(profile, runs, naive_too=True):
    suite_times, raw_times, cleanup_times, naive_times = [], [], [], []
    naive_launches = 0
    report = None
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "r.json")
        for _ in range(runs):
            seconds, done = timed([CLI, "run", "--sandbox", profile, "--json", out, "--no-color"])
            if done.returncode not in (0, 1):
                sys.exit(f"{profile}: sandprobe exit {done.returncode}: {done.stderr.decode()[-500:]}")
            suite_times.append(seconds)
            with open(out) as f:
                report = json.load(f)
            probe = [l for l in report["launches"] if l["purpose"] == "probe"]
            # The raw floor: the identical probe launch, without the harness. The workspace the
            # argv names is gone with the run, so give it a fresh one at the same path.
            workspace = report["witnesses"]["workspace"]
            os.makedirs(workspace, mode=0o777, exist_ok=True)
            os.chmod(workspace, 0o777)
            seconds, _ = timed(probe[0]["argv"])
            # The run removed this instance already; the raw launch made it again (no --rm).
            cleanup = cleanup_argv(report, probe[0]["instance"])
            cleanup_seconds = 0.0
            if cleanup:
                cleanup_seconds, _ = timed(cleanup)
            cleanup_times.append(cleanup_seconds)
            subprocess.run(["rm", "-rf", os.path.dirname(workspace)])
            raw_times.append(seconds)
            if naive_too:
                seconds, naive_launches = run_naive(probe[0]["argv"], report, workspace,
                                                    probe[0]["instance"])
                naive_times.append(seconds)
    launches = report["launches"]
    probe_launches = sum(1 for l in launches if l["purpose"] == "probe")
    suite, raw = statistics.median(suite_times), statistics.median(raw_times)
    raw_cleanup = statistics.median(r + c for r, c in zip(raw_times, cleanup_times))
    naive = statistics.median(naive_times) if naive_times else float("nan")
    return {
        "profile": report["profile"]["name"],
        "checks": len(report["checks"]),
        "probe_launches": probe_launches,
        "all_launches": len(launches),
        "suite_s": suite,
        "raw_launch_s": raw,
        "ratio": suite / (probe_launches * raw),
        "raw_cleanup_s": raw_cleanup,
        "ratio_with_cleanup": suite / (probe_launches * raw_cleanup),
        "naive_s": naive,
        "naive_launches": naive_launches,
        "naive_ratio": naive / suite,
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--no-naive", action="store_true", help="skip the one-launch-per-check baseline")
    parser.add_argument("--suites", action="store_true",
                        help="time every suite and the full audit against its launch floor")
    parser.add_argument("--verdicts", help="with --suites: write the verdicts seen to this file")
    parser.add_argument("--baseline", help="with --suites: another CLI (the build from before a "
                        "change), run alternately with this one, suite by suite")
    parser.add_argument("--baseline-verdicts", help="with --baseline: its verdicts to this file")
    parser.add_argument("--baseline-root", help="with --baseline: its checkout, whose profiles and "
                        "suites it runs (default: this one's)")
    parser.add_argument("profiles", nargs="*",
                        default=["sandboxes/bwrap-strict.json", "sandboxes/docker-hardened.json"])
    args = parser.parse_args()
    if args.suites:
        import e2e_suites
        e2e_suites.main(CLI, ROOT, args.runs, args.profiles, args.verdicts, args.baseline,
                        args.baseline_verdicts, args.baseline_root)
        return
    print(f"{'profile':<18} {'checks':>6} {'probe':>5} {'all':>4} {'suite s':>8} {'raw s':>7} "
          f"{'suite/(probe x raw)':>20} {'raw+cleanup s':>13} {'ratio':>6} "
          f"{'naive s':>8} {'naive n':>7} {'naive/suite':>11}")
    for profile in args.profiles:
        r = measure(os.path.join(ROOT, profile) if not os.path.isabs(profile) else profile, args.runs,
                    naive_too=not args.no_naive)
        print(f"{r['profile']:<18} {r['checks']:>6} {r['probe_launches']:>5} {r['all_launches']:>4} "
              f"{r['suite_s']:>8.3f} {r['raw_launch_s']:>7.3f} {r['ratio']:>20.2f} "
              f"{r['raw_cleanup_s']:>13.3f} {r['ratio_with_cleanup']:>6.2f} "
              f"{r['naive_s']:>8.3f} {r['naive_launches']:>7} {r['naive_ratio']:>11.1f}")


if __name__ == "__main__":
    main()
