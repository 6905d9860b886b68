"""HECKTOR 2026 full run at platform scale: synthetic patients at 512x512x300 (CT grid, spacing
(3.0, 0.98, 0.98) mm), written as compressed .mha label images with a complete submission in the
platform layout, then ``python -m evaluation --challenge hecktor2026 --workers 2`` on them.

Prints the wall time, the per-case time, the largest peak RSS of any process of the run (the
platform allows about 7 GiB per evaluation and one hour) and the extrapolation to 500 patients.
Reference, run as a subprocess from the same files: a plain script (SimpleITK reads each pair,
DeepMind ``surface-distance`` gives HD95 and NSD at 1 and 2 mm per label, numpy the Dice) of the
per-patient segmentation work; its wall time against ours, and its mean Dice, HD95 and NSD per
label against our metrics.json.

Usage: .venv/bin/python benchmarks/hecktor_full_run.py [--patients 100] [--shape 300 512 512] [--workdir DIR] [--full]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import harness
import numpy as np
import SimpleITK as sitk

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "benchmarks")]

from hecktor_segmentation import synthetic_case  # noqa: E402

from evaluation.platform.layout import JobSpec, write_input  # noqa: E402
from evaluation.registry import get  # noqa: E402

CT, PET = get("hecktor2026").phase.inputs  # the declared challenge's sockets
SEGMENTATION_2026, T_STAGE, N_STAGE, RFS = get("hecktor2026").phase.outputs

SPACING = (3.0, 0.98, 0.98)


def write_image(array: np.ndarray, path: Path) -> None:
    image = sitk.GetImageFromArray(array)
    image.SetSpacing(tuple(reversed(SPACING)))
    sitk.WriteImage(image, str(path), useCompression=True)


def make_data(root: Path, patients: int, shape: tuple[int, int, int]) -> tuple[Path, Path]:
    ground_truth, scratch = root / "ground-truth", root / "predictions"
    (ground_truth / "labels").mkdir(parents=True)
    scratch.mkdir()
    rng = np.random.default_rng(0)
    rows, jobs = ["PatientID,RFS,Relapse,T-stage,N-stage,HPV Status"], []
    for index in range(patients):
        name = f"SYN-{index:04d}"
        reference, prediction = synthetic_case(shape, SPACING, seed=index)
        write_image(reference, ground_truth / "labels" / f"{name}.mha")
        write_image(prediction, scratch / f"{name}.mha")
        rfs = float(rng.integers(60, 2500))
        rows.append(f"{name},{rfs:g},{int(rng.random() < 0.4)},T{rng.integers(1, 5)},N{rng.integers(0, 4)},1")
        outputs = {SEGMENTATION_2026: scratch / f"{name}.mha", T_STAGE: f"T{rng.integers(1, 5)}",
                   N_STAGE: f"N{rng.integers(0, 4)}", RFS: max(1.0, rfs + float(rng.normal(0, 300)))}  # fmt: skip
        jobs.append(JobSpec({CT: f"{name}__CT.mha", PET: f"{name}__PT.mha"}, outputs))
    (ground_truth / "clinical.csv").write_text("\n".join(rows) + "\n")
    write_input(root / "input", jobs)
    shutil.rmtree(scratch)
    return ground_truth, root / "input"


def _descendants(root: int) -> list[int]:
    parents = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(stat.parent.name)] = int(fields[1])
    found, frontier = [], [root]
    while frontier:
        children = [pid for pid, parent in parents.items() if parent in frontier]
        found += children
        frontier = children
    return found


def _peak_rss_gib(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024**2
    except OSError:
        pass
    return 0.0


def run_and_watch(command: list[str]) -> tuple[subprocess.CompletedProcess, dict[int, float]]:
    """Run ``command``, polling the peak RSS (VmHWM) of it and of every descendant (the workers)."""
    peaks: dict[int, float] = {}
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        process = subprocess.Popen(command, cwd=REPO, stdout=out, stderr=err, text=True, start_new_session=True)
        while process.poll() is None:
            for pid in [process.pid, *_descendants(process.pid)]:
                peaks[pid] = max(peaks.get(pid, 0.0), _peak_rss_gib(pid))
            time.sleep(0.2)
        harness.wait_for_session(process.pid)
        out.seek(0)
        err.seek(0)
        return subprocess.CompletedProcess(command, process.returncode, out.read(), err.read()), peaks


REFERENCE_SCRIPT = """
import json, sys
from pathlib import Path
import numpy as np, SimpleITK as sitk
import surface_distance as deepmind
labels, input_dir, slug = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
values = {}
for job in json.loads((input_dir / "predictions.json").read_text()):
    patient = job["inputs"][0]["image"]["name"].split("__")[0]
    output = next(o for o in job["outputs"] if o["interface"]["slug"] == slug)
    folder = input_dir / job["pk"] / "output" / output["interface"]["relative_path"]
    prediction_image = sitk.ReadImage(str(next(folder.iterdir())))
    reference = sitk.GetArrayFromImage(sitk.ReadImage(str(labels / f"{patient}.mha")))
    prediction = sitk.GetArrayFromImage(prediction_image)
    spacing = tuple(reversed(prediction_image.GetSpacing()))
    for label in (1, 2):
        r, p = reference == label, prediction == label
        found = deepmind.compute_surface_distances(r, p, spacing)
        dice = 2 * np.count_nonzero(r & p) / (np.count_nonzero(r) + np.count_nonzero(p))
        nsd = [deepmind.compute_surface_dice_at_tolerance(found, mm) for mm in (1.0, 2.0)]
        values.setdefault(label, []).append((dice, deepmind.compute_robust_hausdorff(found, 95), *nsd))
print(json.dumps({label: np.mean(rows, axis=0).tolist() for label, rows in values.items()}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--patients", type=int)
    parser.add_argument("--shape", type=int, nargs=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--workdir", type=Path, default=None, help="where to write the data (default: a temp dir)")
    args = harness.parse(parser, dict(patients=4, shape=(40, 128, 128)), dict(patients=100, shape=(300, 512, 512)))
    root = Path(tempfile.mkdtemp(prefix="hecktor-full-", dir=args.workdir))
    try:
        start = time.perf_counter()
        ground_truth, input_dir = make_data(root, args.patients, tuple(args.shape))
        size = sum(f.stat().st_size for f in root.rglob("*") if f.is_file()) / 1e6
        print(f"{args.patients} patients at {tuple(args.shape)} written in {time.perf_counter() - start:.0f} s "
              f"({size:.0f} MB compressed)")  # fmt: skip
        command = [sys.executable, "-m", "evaluation", "--challenge", "hecktor2026", "--input", str(input_dir),
                   "--output", str(root / "output"), "--ground-truth", str(ground_truth),
                   "--workers", str(args.workers)]  # fmt: skip
        start = time.perf_counter()
        done, peaks = run_and_watch(command)
        seconds = time.perf_counter() - start
        if done.returncode != 0:
            raise SystemExit(f"evaluation failed: {done.stderr.strip().splitlines()[-1]}")
        per_case = seconds / args.patients
        main_peak = peaks.pop(next(iter(peaks)))
        print(f"evaluation with {args.workers} workers: {seconds / 60:.2f} min ({per_case:.2f} s per patient); "
              f"peak RSS: main process {main_peak:.2f} GiB, other processes (forkserver, workers) "
              f"{', '.join(f'{p:.2f}' for p in sorted(peaks.values(), reverse=True))} GiB "
              f"(sum {main_peak + sum(peaks.values()):.2f} GiB; platform: ~7 GiB, 60 min)")  # fmt: skip
        print(f"extrapolated to 500 patients: {500 * per_case / 60:.1f} min")
        start = time.perf_counter()
        script = [sys.executable, "-c", REFERENCE_SCRIPT, str(ground_truth / "labels"), str(input_dir),
                  SEGMENTATION_2026.slug]  # fmt: skip
        reference, _ = run_and_watch(script)
        wall = time.perf_counter() - start
        if reference.returncode != 0:
            raise SystemExit(f"the DeepMind script failed: {reference.stderr.strip().splitlines()[-1:]}")
        theirs = json.loads(reference.stdout.strip().splitlines()[-1])
        ours = json.loads((root / "output" / "metrics.json").read_text())["aggregates"]
        segmentation = json.loads((root / "output" / "metrics.json").read_text())["aggregates"]["segmentation"]
        names = ("dice", "hd95", "nsd_1mm", "nsd_2mm")
        ours = {
            label: [segmentation[f"{n}_{key}_mean"] for n in names] for label, key in (("1", "gtvp"), ("2", "gtvn"))
        }
        worst = max(abs(a - b) for label in ours for a, b in zip(ours[label], theirs[label], strict=True))
        print(f"plain DeepMind script (segmentation only, 1 process): {wall:.1f} s | ours (segmentation, staging, "
              f"prognosis, bootstrap CIs; {args.workers} workers): {seconds:.1f} s | {wall / seconds:.2f}x; "
              f"mean Dice, HD95, NSD 1/2 mm per label: {'identical' if worst <= 1e-9 else 'DIFFERENT'} "
              f"(max |diff| {worst:.1e})")  # fmt: skip
        if worst > 1e-9:
            raise SystemExit(1)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
