"""A segmentation worker imports only what its case needs (issue 20): the process pool's forkserver
preloads the module of ``score_case`` (evaluation/runner.py ``_run_in_pool``), for every declared
challenge ``evaluation.declarative.engine``, and each case then runs
``summarise_label_maps`` (evaluation/declarative/segmentation.py). Measured as the worker pays it, in
a fresh interpreter under ``python -X importtime``: scikit-learn, pandas and scipy.stats (seconds of
start-up in every pool process) must not load."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FORBIDDEN = ("sklearn", "pandas", "scipy.stats")

WORKER = """
import numpy as np
import evaluation.declarative.engine  # what the forkserver preloads
from evaluation.metrics.segmentation import LabelRequest, summarise_label_maps

reference = np.zeros((6, 12, 12), np.uint8)
reference[1:4, 2:6, 2:6], reference[2:5, 7:10, 7:10] = 1, 2
prediction = np.roll(reference, 1, axis=2)
every = LabelRequest(1, hd95=True, hausdorff=True, masd=True, nsd=(1.0,), lesions=(0.1,), hungarian=(0.1,),
                     panoptic=(0.5,), volumes=((True, True, True),))
summarise_label_maps(reference, prediction, (3.0, 1.0, 1.0), {"a": every, "b": LabelRequest(2, hd95=True)})
"""


def test_a_segmentation_worker_loads_no_classification_library() -> None:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", WORKER], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    timings = [line.split("|") for line in done.stderr.splitlines() if line.startswith("import time:")]
    loaded = {parts[-1].strip(): int(parts[1]) for parts in timings if len(parts) == 3 and parts[1].strip().isdigit()}
    heavy = {name: f"{micros / 1e6:.2f} s" for name, micros in loaded.items() if name in FORBIDDEN}
    assert not heavy, f"a segmentation worker imports {heavy} (cumulative import time)"


def test_a_declared_segmentation_run_loads_no_classification_library_anywhere(tmp_path):
    """Issue 30: kits-example (segmentations, and AUROC, Brier and ECE of a likelihood) run as the platform runs
    it, one worker: neither its command process nor its worker (a fork of it) loads scikit-learn, pandas or
    scipy.stats (the catalogue's AUROC and Brier restate scikit-learn's arithmetic), nor DeepMind's package
    (its area table is read alone), and no forkserver is started."""
    command = [sys.executable, "-X", "importtime", "-m", "evaluation", "--challenge", "kits-example", "--input",
               str(REPO / "test" / "input" / "kits-example"), "--output", str(tmp_path), "--workers", "1"]  # fmt: skip
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    loaded = {line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert not loaded & {*FORBIDDEN, "surface_distance", "multiprocessing.forkserver"}
    assert (tmp_path / "metrics.json").read_bytes() == (
        REPO / "test" / "expected" / "kits-example" / "metrics.json"
    ).read_bytes()


def test_the_pool_forks_only_a_process_without_other_threads():
    """A fork of a process with other threads may inherit a lock one of them held: then a forkserver."""
    import threading

    from evaluation.runner import _pool_context, run_cases

    alone = threading.active_count() == 1
    assert _pool_context(run_cases).get_start_method() == ("fork" if alone else "forkserver")
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert _pool_context(run_cases).get_start_method() == "forkserver"
    finally:
        stop.set()
        other.join()


def test_a_prediction_file_phase_loads_only_what_its_metrics_use(tmp_path):
    """Issue 30, start-up: the README's CSV sketch (AUROC and MAE of number columns, read and scored as columns
    in the command's process) loads neither scikit-learn, pandas nor SciPy, and starts no process pool."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    import whole_path

    declaration, truth, answers = whole_path.csv_inputs(tmp_path / "phase", 1200)
    command = [sys.executable, "-X", "importtime", "-m", "evaluation", "--challenge", str(declaration), "--input",
               str(answers.parent), "--ground-truth", str(truth.parent), "--output", str(tmp_path / "out")]  # fmt: skip
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    loaded = {line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert not {name for name in loaded if name.split(".")[0] in ("sklearn", "pandas", "scipy", "multiprocessing")}


def _declared_demos() -> list[str]:
    """Every declared challenge with a demo (its input under test/input, its bundled ground truth)."""
    names = sorted(path.stem for path in (REPO / "evaluation" / "declarations").glob("*.toml"))
    return [name for name in names if all((REPO / where / name).is_dir() for where in ("test/input", "ground-truth"))]


@pytest.mark.parametrize("challenge", _declared_demos())
def test_no_declared_challenge_loads_scikit_learn(challenge, tmp_path):
    """Issue 30: scikit-learn's import cost every evaluation that used a curve or a label metric a second of
    start-up; its curves and label metrics are restated bit for bit (evaluation/metrics/curves.py,
    classification.py) and no declared challenge's demo, run as the platform runs it (one worker), loads it
    in any of its processes."""
    command = [sys.executable, "-X", "importtime", "-m", "evaluation", "--challenge", challenge, "--input",
               str(REPO / "test" / "input" / challenge), "--output", str(tmp_path), "--workers", "1"]  # fmt: skip
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    loaded = {line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert not {name for name in loaded if name.split(".")[0] == "sklearn"}


def test_a_declaration_of_other_metrics_loads_no_metric_module_it_does_not_call():
    """Issue 29 (the engine's start-up against the former rare25 module): loading the engine and rare25.toml (a
    whole-set python metric of a number output) imports neither the metric catalogue, which imports every metric
    module, nor the segmentation, surface, lesion-wise, overlap and detection modules: each is imported where a
    metric of its own is computed."""
    code = "import evaluation.cli\nfrom evaluation.registry import get\nget('rare25')"
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    loaded = {line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    unused = {f"evaluation.metrics.{name}" for name in ("catalogue", "segmentation", "surface", "lesion_wise",
                                                        "lesion_detection", "overlap", "detection", "hit_radius",
                                                        "detection_maps", "lesions", "boxes", "volumes")}  # fmt: skip
    unused |= {"evaluation.declarative.heat_maps"}
    assert not loaded & unused, sorted(loaded & unused)
