#!/usr/bin/env python3
"""Compares two verdict files written by `bench/e2e.py --suites --verdicts FILE`:
{profile: {suite: {check id: [verdicts seen over the runs]}}}. Prints every difference (a check
only in one, or a different set of verdicts) and exits 1 when there is any, 0 when identical.
A check whose verdict varied between the runs of one file (e.g. res.cpu inconclusive on a
loaded machine) shows as a set. Equal sets are identical; sets that differ but share a verdict,
where either varied, are printed as "unstable" and not counted as a difference (the machine's
load, not the change, decides which one a run gets); every other difference counts.

Usage: bench/compare_verdicts.py BEFORE.json AFTER.json
"""
import json
import sys


def main():
    before, after = (json.load(open(p)) for p in sys.argv[1:3])
    differences = unstable = 0
    checks = 0
    for profile in sorted(set(before) | set(after)):
        suites_b, suites_a = before.get(profile, {}), after.get(profile, {})
        for suite in sorted(set(suites_b) | set(suites_a)):
            b, a = suites_b.get(suite, {}), suites_a.get(suite, {})
            for check in sorted(set(b) | set(a)):
                checks += 1
                vb, va = b.get(check), a.get(check)
                if vb == va:
                    continue
                if vb and va and set(vb) & set(va) and (len(vb) > 1 or len(va) > 1):
                    unstable += 1
                    print(f"unstable {profile} {suite} {check}: before {vb} after {va}")
                    continue
                differences += 1
                print(f"DIFFERS {profile} {suite} {check}: before {vb} after {va}")
    print(f"{checks} checks compared, {differences} differ, {unstable} unstable")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
