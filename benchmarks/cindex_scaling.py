"""Harrell's C-index at n = 1,000 / 10,000 / 100,000 against ``lifelines.utils.concordance_index``,
same run, same data (integer times with many ties, predictions rounded to 2 decimals, ~40% events).

Each side runs in a fresh subprocess per size: wall time of the call (best of ``--repeat``), peak
traced memory of the call (tracemalloc: numpy's buffers and Python objects) and the process's peak
RSS (interpreter and imports included). Also one bootstrap: 1,000 weighted resamples at n = 20,000
(HECKTOR's CI), ours only (lifelines has no weighted form; 1,000 calls would take minutes).
Acceptance (issue 12): n = 100,000 no slower than lifelines and under 300 MiB; values equal to 1e-12.

Usage: .venv/bin/python benchmarks/cindex_scaling.py [--sizes 1000 10000 100000] [--repeat 3] [--full]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import harness

REPO = Path(__file__).resolve().parents[1]

CHILD = """
import json, resource, sys, time, tracemalloc
import numpy as np
sys.path.insert(0, {repo!r})
side, n, repeat, resamples = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rng = np.random.default_rng(n)
time_ = rng.integers(1, max(2, n // 20), n).astype(float)
event = rng.random(n) < 0.4
risk = np.round(rng.normal(size=n) - 0.002 * time_, 2)
if side == "lifelines":
    from lifelines.utils import concordance_index
    call = lambda: concordance_index(time_, -risk, event)
else:
    from evaluation.metrics.survival import concordance_index
    if resamples:
        from evaluation.metrics.bootstrap import resample_weights
        weights = resample_weights(n, resamples, 0)
        call = lambda: concordance_index(time_, event, risk, weights=weights)
    else:
        call = lambda: concordance_index(time_, event, risk)
value = call()  # warm-up (imports, first-touch)
best = float("inf")
for _ in range(repeat):
    start = time.perf_counter()
    call()
    best = min(best, time.perf_counter() - start)
tracemalloc.start()
call()
peak = tracemalloc.get_traced_memory()[1]
tracemalloc.stop()
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({{"value": np.asarray(value).tolist(), "seconds": best, "traced": peak, "rss": rss}}))
"""


def measure(side: str, n: int, repeat: int, resamples: int = 0) -> dict:
    command = [sys.executable, "-c", CHILD.format(repo=str(REPO)), side, str(n), str(repeat), str(resamples)]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+")
    parser.add_argument("--repeat", type=int)
    parser.add_argument("--resamples", type=int, help="bootstrap resamples at n=20,000")
    args = harness.parse(
        parser, dict(sizes=[2000], repeat=1, resamples=50), dict(sizes=[1000, 10000, 100000], repeat=3, resamples=1000)
    )
    mib = 1024**2
    ok = True
    for n in args.sizes:
        ours, reference = measure("ours", n, args.repeat), measure("lifelines", n, args.repeat)
        same = abs(ours["value"] - reference["value"]) <= 1e-12
        ok &= same
        print(f"n={n:>7,}: ours {ours['seconds']:.3f} s, {ours['traced'] / mib:.1f} MiB traced "
              f"({ours['rss'] / mib:.0f} MiB RSS) | lifelines {reference['seconds']:.3f} s, "
              f"{reference['traced'] / mib:.1f} MiB traced ({reference['rss'] / mib:.0f} MiB RSS) | "
              f"{reference['seconds'] / ours['seconds']:.1f}x faster | C-index "
              f"{'equal' if same else 'DIFFERENT'} ({ours['value']:.15f})")  # fmt: skip
        if n == max(args.sizes) and n >= 100_000:
            met = ours["seconds"] <= reference["seconds"] and ours["traced"] < 300 * mib
            print(f"acceptance at n={n:,} (no slower than lifelines, under 300 MiB): {'met' if met else 'NOT met'}")
    boot = measure("ours", 20_000, 1, resamples=args.resamples)
    print(f"bootstrap, {args.resamples:,} weighted resamples at n=20,000: {boot['seconds']:.2f} s, "
          f"{boot['traced'] / mib:.0f} MiB traced in the call ({boot['rss'] / mib:.0f} MiB RSS, drawing the "
          f"{args.resamples} x 20,000 weights included)")  # fmt: skip
    if not ok:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
