#!/usr/bin/env python3
"""The egress lab's budget (issue 28): what joining the lab adds to the network suite on bwrap.

Runs, interleaved N times (order alternating per pair so neither side always goes first):
  base: `sandprobe run --sandbox bwrap-strict --suite network`
  lab:  `sandprobe run --sandbox bwrap-lab --suite network` (the same bwrap, joined to the lab,
        judged against lab-allow-one: the allowlist and net.bypass checks on top)
and prints each side's median wall time, the median of the per-pair differences (lab - base)
and the load average before and after. The budget is "at most 10 ms more".

Usage: bench/lab_budget.py [--pairs 41] [--cli build/sandprobe] [--vs OTHER_CLI] [--base PROFILE] [--lab PROFILE]
SANDPROBE_BENCH_CLI or --cli: another build of the CLI (e.g. one kept from before a change).
--vs OTHER_CLI: the same pairs with a second build, interleaved with the first (each round runs
both builds' pairs, in alternating order), so that both see the same load; prints both and the
difference of their lab costs. (A build tree's CLI finds its probe and data beside it: copy
build/sandprobe, build/probe/ and the build/sandprobe-data link together.)
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def timed_run(cli, profile, out_dir):
    argv = [cli, "run", "--sandbox", profile, "--suite", "network", "--fail-on", "none", "--no-progress",
            "--json", os.path.join(out_dir, "report.json")]
    start = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv)}: exit {done.returncode}: {done.stderr.decode()[-400:]}")
    return elapsed


def measure_pairs(cli, args, out_dir, i, base, lab):
    order = [(args.base, base), (args.lab, lab)]
    if i % 2:
        order.reverse()
    for profile, times in order:
        times.append(timed_run(cli, profile, out_dir))


def report(cli, args, base, lab):
    diffs = [l - b for b, l in zip(base, lab)]
    ms = lambda s: f"{s * 1000:.1f} ms"
    print(f"pairs: {args.pairs}  cli: {cli}")
    print(f"base ({os.path.basename(args.base)}): median {ms(statistics.median(base))}")
    print(f"lab  ({os.path.basename(args.lab)}): median {ms(statistics.median(lab))}")
    print(f"lab - base: median of pair differences {ms(statistics.median(diffs))}, "
          f"difference of medians {ms(statistics.median(lab) - statistics.median(base))}")
    return statistics.median(diffs)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=41)
    parser.add_argument("--cli", default=os.environ.get("SANDPROBE_BENCH_CLI", os.path.join(ROOT, "build", "sandprobe")))
    parser.add_argument("--vs", default=None, help="a second CLI, measured interleaved with --cli")
    parser.add_argument("--base", default=os.path.join(ROOT, "sandboxes", "bwrap-strict.json"))
    parser.add_argument("--lab", default=os.path.join(ROOT, "sandboxes", "bwrap-lab.json"))
    parser.add_argument("--warmup", type=int, default=2)
    args = parser.parse_args()
    clis = [args.cli] + ([args.vs] if args.vs else [])
    load_before = os.getloadavg()
    times = {cli: ([], []) for cli in clis}
    with tempfile.TemporaryDirectory(prefix="sandprobe-lab-budget-") as out_dir:
        for _ in range(args.warmup):
            for cli in clis:
                timed_run(cli, args.base, out_dir)
                timed_run(cli, args.lab, out_dir)
        for i in range(args.pairs):
            for cli in (clis if i % 2 == 0 else clis[::-1]):
                measure_pairs(cli, args, out_dir, i, *times[cli])
    load_after = os.getloadavg()
    costs = [report(cli, args, *times[cli]) for cli in clis]
    if len(costs) == 2:
        print(f"lab cost, {clis[1]} - {clis[0]}: {(costs[1] - costs[0]) * 1000:+.1f} ms")
    print(f"load average (1, 5, 15 min): before {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}, "
          f"after {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}")


if __name__ == "__main__":
    main()
