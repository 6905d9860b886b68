"""Reading a declared prediction-file phase's CSV (``platform.prediction_file.read_prediction_table``)
against ``pandas.read_csv(dtype=str)`` (what ISIC reads its CSV with), same run, same file.

The file: short rows of a case id and five values (``img00000001,0.123456,45.5,low,1,note``) up to
``--mb`` MB, the size limit a declaration sets (``[submission] max_mb``, default 10). Each side runs
in a fresh subprocess: wall time of the read (best of ``--repeat``) and the process's peak RSS
(interpreter and imports included). The point: what the default limit costs at worst, and that the
reader is at pandas' speed or better (issue 20: a speed ratio >= 1x; a file without quotes is split
whole, only the case column cut out per row, every check vectorised).

Usage: .venv/bin/python benchmarks/prediction_csv.py [--mb 1 10] [--repeat 3] [--full]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import harness

REPO = Path(__file__).resolve().parents[1]

CHILD = """
import json, resource, sys, time
from pathlib import Path
sys.path.insert(0, {repo!r})
side, path, repeat = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
if side == "pandas":
    import pandas as pd
    call = lambda: len(pd.read_csv(path, dtype=str, keep_default_na=False))
else:
    from evaluation.platform.prediction_file import read_prediction_table
    call = lambda: len(read_prediction_table(path, "image", 1000.0).rows)
best, rows = float("inf"), 0
for _ in range(repeat):
    start = time.perf_counter()
    rows = call()
    best = min(best, time.perf_counter() - start)
print(json.dumps({{"rows": rows, "seconds": best, "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}}))
"""


def write_csv(path: Path, megabytes: float) -> None:
    with path.open("w") as stream:
        stream.write("image,p_malignant,age,grade,lesion,comment\n")
        row = 0
        while stream.tell() < megabytes * 1e6 - 64:
            stream.write(f"img{row:08d},0.123456,45.5,low,1,note\n")
            row += 1


def measure(side: str, path: Path, repeat: int) -> dict:
    command = [sys.executable, "-c", CHILD.format(repo=str(REPO)), side, str(path), str(repeat)]
    return json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, nargs="+")
    parser.add_argument("--repeat", type=int)
    arguments = harness.parse(parser, dict(mb=[0.5], repeat=1), dict(mb=[1.0, 10.0], repeat=3))
    with tempfile.TemporaryDirectory() as scratch:
        for megabytes in arguments.mb:
            path = Path(scratch) / "predictions.csv"
            write_csv(path, megabytes)
            ours, pandas = measure("ours", path, arguments.repeat), measure("pandas", path, arguments.repeat)
            assert ours["rows"] == pandas["rows"]
            print(
                f"{megabytes:g} MB, {ours['rows']} rows: ours {ours['seconds']:.2f} s, peak RSS "
                f"{ours['rss'] / 2**20:.0f} MiB; pandas {pandas['seconds']:.2f} s, {pandas['rss'] / 2**20:.0f} MiB; "
                f"speed {pandas['seconds'] / ours['seconds']:.2f}x pandas' (goal >= 1x), "
                f"memory x{ours['rss'] / pandas['rss']:.1f}"
            )


if __name__ == "__main__":
    main()
