"""HECKTOR 2025/2026 through the command line: hand-computed goldens, options, every bad input."""

from __future__ import annotations

import csv
import functools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import SimpleITK as sitk
from conftest import DEMO_INPUT, GROUND_TRUTH
from lifelines.utils import concordance_index as lifelines_c_index
from sklearn.metrics import balanced_accuracy_score

from evaluation.declarative.reference import strip_marker
from evaluation.metrics.classification import balanced_accuracy
from evaluation.platform.layout import JobSpec, write_input
from evaluation.platform.matching import stem
from evaluation.registry import get

(HPV,) = get("hecktor2025-task3").phase.outputs  # the declared challenge's socket
CT, PET = get("hecktor2026").phase.inputs  # the declared challenge's sockets
SEGMENTATION_2026, T_STAGE, N_STAGE, RFS = get("hecktor2026").phase.outputs
(SEGMENTATION_2025,) = get("hecktor2025-task1").phase.outputs  # the declared challenge's socket
CHALLENGES = ("hecktor2026", "hecktor2025-task1", "hecktor2025-task2", "hecktor2025-task3")
WORKERS = ("--workers", "1")  # tiny cases: one worker process is enough (and starts faster)
SEGMENTATION = {"hecktor2026": SEGMENTATION_2026, "hecktor2025-task1": SEGMENTATION_2025}


@dataclass
class Patient:
    """Ground truth and prediction of one patient; ``None`` leaves the output out."""

    label: np.ndarray | None = None
    prediction: np.ndarray | sitk.Image | Path | None = None
    spacing: tuple[float, float, float] = (1.0, 1.0, 1.0)  # z, y, x
    clinical: dict[str, Any] = field(default_factory=dict)
    outputs: dict[Any, Any] = field(default_factory=dict)


def to_image(array: np.ndarray, spacing) -> sitk.Image:
    image = sitk.GetImageFromArray(array)
    image.SetSpacing(tuple(float(s) for s in reversed(spacing)))
    return image


def line(*ranges: tuple[int, int], label: int = 1, length: int = 10) -> np.ndarray:
    mask = np.zeros((1, 1, length), dtype=np.uint8)
    for start, stop in ranges:
        mask[0, 0, start:stop] = label
    return mask


def make_case(root: Path, challenge: str, patients: dict[str, Patient], jobs: list[JobSpec] | None = None):
    """Ground truth and a submission in the platform layout; returns (ground_truth, input_dir)."""
    ground_truth, input_dir, scratch = root / "gt", root / "input", root / "scratch"
    for folder in (ground_truth / "labels", scratch):
        folder.mkdir(parents=True)
    rows = ["PatientID,RFS,Relapse,T-stage,N-stage,HPV Status"]
    specs = []
    for name, patient in patients.items():
        c = {"RFS": 100, "Relapse": 0, "T-stage": "T1", "N-stage": "N0", "HPV Status": 1, **patient.clinical}
        rows.append(f"{name},{c['RFS']},{c['Relapse']},{c['T-stage']},{c['N-stage']},{c['HPV Status']}")
        if patient.label is not None:
            sitk.WriteImage(to_image(patient.label, patient.spacing), str(ground_truth / "labels" / f"{name}.mha"))
        outputs = dict(patient.outputs)
        if patient.prediction is not None:
            prediction = patient.prediction
            if isinstance(prediction, np.ndarray):
                prediction = to_image(prediction, patient.spacing)
            if isinstance(prediction, sitk.Image):
                path = scratch / f"{name}.mha"
                sitk.WriteImage(prediction, str(path))
                prediction = path
            outputs[SEGMENTATION[challenge]] = prediction
        specs.append(JobSpec({CT: f"{name}__CT.nii.gz", PET: f"{name}__PT.nii.gz"}, outputs))
    (ground_truth / "clinical.csv").write_text("\n".join(rows) + "\n")
    write_input(input_dir, specs if jobs is None else jobs)
    return ground_truth, input_dir


def run_case(tmp_path, evaluate_cli, challenge, patients, *extra, jobs=None):
    ground_truth, input_dir = make_case(tmp_path, challenge, patients, jobs)
    return evaluate_cli(challenge, input_dir, *WORKERS, *extra, ground_truth=ground_truth)


def golden_segmentation() -> dict[str, Patient]:
    """The issue's three 1x1x10 patients, spacing (1, 1, 2)."""
    spacing = (1.0, 1.0, 2.0)
    return {
        "A": Patient(line((0, 4)) + line((6, 8), label=2), line((1, 5)) + line((6, 7), (9, 10), label=2), spacing),
        "B": Patient(line((2, 5)), line((2, 5)) + line((8, 9), label=2), spacing),
        "C": Patient(line((0, 2)), line(), spacing),
    }


def percentile_bootstrap(statistic, n: int, seed: int = 0, resamples: int = 1000) -> tuple[float, float]:
    """The 95% percentile interval of ``statistic(indices)`` over ``default_rng(seed).integers(0, n,
    (resamples, n))`` (the evaluation's draws), undefined resamples (NaN) left out."""
    draws = np.random.default_rng(seed).integers(0, n, (resamples, n))
    values = np.array([statistic(indices) for indices in draws], dtype=float)
    low, high = np.percentile(values[np.isfinite(values)], [2.5, 97.5])
    return float(low), float(high)


def aggregated_dice_of(intersections: np.ndarray, totals: np.ndarray):
    """indices -> 2 * sum |G ∩ P| / sum (|G| + |P|) over the drawn patients (1.0 when both sums are 0)."""

    def statistic(indices):
        total = totals[indices].sum()
        return 2 * intersections[indices].sum() / total if total else 1.0

    return statistic


def harrell_loop(time, event, risk) -> float:
    """Harrell's C-index over every ordered pair (i, j): comparable when time_i < time_j and i had the
    event; concordant when risk_i > risk_j, 0.5 on a tie; a pair with a missing (NaN) risk counts 0
    (the seed's non-concordant rule); NaN without comparable pairs."""
    time, event, risk = np.asarray(time, dtype=float), np.asarray(event, dtype=bool), np.asarray(risk, dtype=float)
    comparable = (time[:, None] < time[None, :]) & event[:, None]
    present = np.isfinite(risk)[:, None] & np.isfinite(risk)[None, :]
    with np.errstate(invalid="ignore"):
        credit = np.where(risk[:, None] > risk[None, :], 1.0, np.where(risk[:, None] == risk[None, :], 0.5, 0.0))
    pairs = comparable.sum()
    return float((credit * (comparable & present)).sum() / pairs) if pairs else float("nan")


def demo_outputs(challenge: str) -> dict[str, dict[str, Any]]:
    """Each demo patient's outputs read straight from the platform layout: value sockets' JSON, and the
    segmentation file's path under ``"segmentation"``."""
    outputs: dict[str, dict[str, Any]] = {}
    folder = DEMO_INPUT / challenge
    for job in json.loads((folder / "predictions.json").read_text()):
        patient = job["inputs"][0]["image"]["name"].removesuffix("__CT.mha").removesuffix("__CT.nii.gz")
        found: dict[str, Any] = {}
        for output in job["outputs"]:
            path = folder / job["pk"] / "output" / output["interface"]["relative_path"]
            if output["interface"]["super_kind"] == "Image":
                found["segmentation"] = next(path.iterdir())
            elif path.is_file():
                found[output["interface"]["slug"]] = json.loads(path.read_text())
        outputs[patient] = found
    return outputs


def demo_clinical(challenge: str) -> dict[str, dict[str, str]]:
    with (GROUND_TRUTH / challenge / "clinical.csv").open() as handle:
        return {row["PatientID"]: row for row in csv.DictReader(handle)}


def test_aggregated_dice_golden_2026(tmp_path, evaluate_cli):
    patients = golden_segmentation()
    for days, patient in enumerate(patients.values()):
        patient.clinical = {"RFS": 100 * (days + 1), "Relapse": 1}
        patient.outputs = {T_STAGE: "T1", N_STAGE: "N0", RFS: 100.0}
    run = run_case(tmp_path, evaluate_cli, "hecktor2026", patients)
    assert run.exit_code == 0, run.stderr
    seg = run.metrics["aggregates"]["segmentation"]
    assert seg["dice_gtvp"] == pytest.approx(0.75, abs=1e-12)
    assert seg["dice_gtvn"] == pytest.approx(0.4, abs=1e-12)
    assert seg["score"] == pytest.approx(0.575, abs=1e-12)
    # |G ∩ P|, |G| + |P| in voxels of 2 mm³, GTVp: A 3, 8; B 3, 6; C 0, 2. GTVn: A 1, 4; B 0, 1; C 0, 0
    gtvp = aggregated_dice_of(np.array([3.0, 3.0, 0.0]) * 2, np.array([8.0, 6.0, 2.0]) * 2)
    gtvn = aggregated_dice_of(np.array([1.0, 0.0, 0.0]) * 2, np.array([4.0, 1.0, 0.0]) * 2)
    expected = percentile_bootstrap(lambda indices: (gtvp(indices) + gtvn(indices)) / 2, 3)
    assert (seg["score_ci_low"], seg["score_ci_high"]) == pytest.approx(expected, abs=1e-12)
    assert (seg["dice_gtvp_ci_low"], seg["dice_gtvp_ci_high"]) == pytest.approx(
        percentile_bootstrap(gtvp, 3), abs=1e-12
    )
    assert run.metrics["settings"]["seed"] == 0 and run.metrics["settings"]["bootstrap_resamples"] == 1000


def test_per_patient_dice_and_detection_2025_task1(tmp_path, evaluate_cli):
    run = run_case(tmp_path, evaluate_cli, "hecktor2025-task1", golden_segmentation())
    assert run.exit_code == 0, run.stderr
    seg = run.metrics["aggregates"]["segmentation"]
    assert seg["dice_gtvp_mean"] == pytest.approx(0.583333, abs=1e-6)
    assert run.metrics["case"]["A"]["dice_gtvp"] == pytest.approx(0.75)
    assert run.metrics["case"]["C"]["dice_gtvn"] == 1.0  # both empty: 1.0 by default
    # GTVn lesions: A: reference 6:8 vs predicted 6:7 (IoU 0.5, TP) and 9 (FP); B: predicted 8 (FP)
    detection = run.metrics["aggregates"]["detection"]
    assert (detection["tp_gtvn"], detection["fp_gtvn"], detection["fn_gtvn"]) == (1, 2, 0)
    assert detection["f1_gtvn"] == pytest.approx(0.5)
    excluded = run_case(tmp_path / "x", evaluate_cli, "hecktor2025-task1", golden_segmentation(),
                        "--set", "dice_both_empty=exclude")  # fmt: skip
    assert excluded.metrics["aggregates"]["segmentation"]["dice_gtvn_mean"] == pytest.approx((0.5 + 0.0) / 2)


@pytest.mark.parametrize("options", [(), ("--set", "aggregate_volume=voxels", "--set", "dice_both_empty=exclude",
                                           "--set", "surface_metrics=false")])  # fmt: skip
def test_2026_scores_its_images_as_2025_task1(tmp_path, evaluate_cli, options):
    """HECKTOR 2026's segmentation and detection are task 1's declaration on the 2026 socket: the same
    aggregates, CIs and per-patient values, the options forwarded."""
    runs = {}
    for challenge in ("hecktor2026", "hecktor2025-task1"):
        patients = golden_segmentation()
        for days, patient in enumerate(patients.values()):
            patient.clinical = {"RFS": 100 * (days + 1), "Relapse": 1}
            patient.outputs = {T_STAGE: "T1", N_STAGE: "N0", RFS: 100.0}
        runs[challenge] = run_case(tmp_path / challenge, evaluate_cli, challenge, patients, *options)
        assert runs[challenge].exit_code == 0, runs[challenge].stderr
    ours, task1 = runs["hecktor2026"].metrics, runs["hecktor2025-task1"].metrics
    for group in ("segmentation", "detection"):
        assert ours["aggregates"][group] == task1["aggregates"][group]
    assert ours["case"] == task1["case"] and ours["missing"]["segmentation"] == task1["missing"]["segmentation"]
    assert {k: v for k, v in ours["settings"].items() if k in task1["settings"] and k != "challenge"} == {
        k: v for k, v in task1["settings"].items() if k != "challenge"
    }


def test_mm3_versus_voxels(tmp_path, evaluate_cli):
    patients = {
        "A": Patient(line((0, 4)), line((2, 6)), (1.0, 1.0, 1.0)),
        "B": Patient(line((0, 2)), line((0, 2)), (1.0, 1.0, 3.0)),  # the "spacing z=3"
    }
    mm3 = run_case(tmp_path / "a", evaluate_cli, "hecktor2025-task1", patients)
    voxels = run_case(tmp_path / "b", evaluate_cli, "hecktor2025-task1", patients, "--set", "aggregate_volume=voxels")
    assert mm3.metrics["aggregates"]["segmentation"]["dice_gtvp"] == pytest.approx(0.8, abs=1e-12)
    assert voxels.metrics["aggregates"]["segmentation"]["dice_gtvp"] == pytest.approx(0.666667, abs=1e-6)
    assert voxels.metrics["settings"]["aggregate_volume"] == "voxels"
    assert mm3.metrics["aggregates"]["segmentation"]["labels_absent_everywhere"] == ["gtvn"]


def prognosis_patients(risks) -> dict[str, Patient]:
    times, events = [100, 200, 300, 400, 500, 600], [1, 0, 1, 1, 0, 0]
    return {
        f"P{i}": Patient(clinical={"RFS": t, "Relapse": e}, outputs={} if r is None else {RFS: r})
        for i, (t, e, r) in enumerate(zip(times, events, risks, strict=True))
    }


def test_c_index_golden_and_missing_policies(tmp_path, evaluate_cli):
    def c_index(risks, *extra):
        folder = tmp_path / str(len(list(tmp_path.iterdir())))
        run = run_case(folder, evaluate_cli, "hecktor2025-task2", prognosis_patients(risks), *extra)
        assert run.exit_code == 0, run.stderr
        return run.metrics["aggregates"]["prognosis"]["c_index"], run.metrics

    assert c_index([0.9, 0.5, 0.7, 0.2, 0.3, 0.1])[0] == pytest.approx(0.9, abs=1e-12)
    assert c_index([0.9, 0.5, 0.7, 0.2, 0.2, 0.1])[0] == pytest.approx(0.95, abs=1e-12)
    with_gap = [0.9, 0.5, None, 0.2, 0.3, 0.1]
    value, metrics = c_index(with_gap)
    assert value == pytest.approx(0.5, abs=1e-12) and metrics["missing"]["prognosis"] == ["P2"]
    assert c_index(with_gap, "--set", "missing_prognosis=tie")[0] == pytest.approx(0.7, abs=1e-12)
    # RFS as a time (the 2026 default): days predicted; higher = later recurrence
    days = [100.0, 500.0, 300.0, 800.0, 700.0, 900.0]
    assert c_index(days, "--set", "rfs_output=time")[0] == pytest.approx(0.9, abs=1e-12)


STAGES_T = (["T1", "T2", "T2", "T3", "T4", "T4", "T2", "T3"], ["T1", "T2", "T3", "T3", "T4", "T2", "T2", "Tx"])
STAGES_N = (["N0", "N1", "N2", "N2", "N3", "N0", "N1", "N2"], ["N0", "N1", "N2b", "N1", "N3", "N1", "N1", "N2"])


def staging_patients() -> dict[str, Patient]:
    patients = {}
    for i in range(8):
        patients[f"S{i}"] = Patient(
            label=line((0, 2)), prediction=line((0, 2)),
            clinical={"T-stage": STAGES_T[0][i], "N-stage": STAGES_N[0][i], "RFS": 100 * (i + 1), "Relapse": 1},
            outputs={T_STAGE: STAGES_T[1][i], N_STAGE: STAGES_N[1][i], RFS: 1000.0 + i},
        )  # fmt: skip
    return patients


def test_balanced_accuracy_golden_2026(tmp_path, evaluate_cli):
    run = run_case(tmp_path, evaluate_cli, "hecktor2026", staging_patients())
    assert run.exit_code == 0, run.stderr
    staging = run.metrics["aggregates"]["staging"]
    # T: recalls T1 1, T2 2/3, T3 1/2 (Tx never right), T4 1/2; N: N0 1/2, N1 1, N2 2/3 (N2b = N2), N3 1
    assert staging["balanced_accuracy_t"] == pytest.approx(0.666667, abs=1e-6)
    assert staging["balanced_accuracy_n"] == pytest.approx(0.791667, abs=1e-6)
    assert staging["score"] == pytest.approx((2 / 3 + 0.791667) / 2, abs=1e-6)
    assert run.metrics["aggregates"]["prognosis"]["c_index"] == pytest.approx(1.0)  # later RFS predicted later


def test_missing_outputs_follow_the_seed(tmp_path, evaluate_cli):
    patients = staging_patients()
    patients["S0"].outputs = {N_STAGE: "N0"}  # no T stage, no RFS
    patients["S1"].prediction = None  # no segmentation: an empty mask
    jobs = None
    run = run_case(tmp_path, evaluate_cli, "hecktor2026", patients, jobs=jobs)
    assert run.exit_code == 0, run.stderr
    assert run.metrics["missing"]["t_stage"] == ["S0"] and run.metrics["missing"]["prognosis"] == ["S0"]
    assert run.metrics["missing"]["segmentation"] == ["S1"]
    assert run.metrics["case"]["S1"]["dice_gtvp"] == 0.0 and run.metrics["case"]["S1"]["hd95_gtvp"] > 0
    truth = STAGES_T[0]
    predicted = ["-", *STAGES_T[1][1:]]
    expected = balanced_accuracy_score(truth, predicted)
    assert run.metrics["aggregates"]["staging"]["balanced_accuracy_t"] == pytest.approx(expected, abs=1e-12)


def test_a_patient_without_a_job_is_missing_everywhere(tmp_path, evaluate_cli):
    patients = staging_patients()
    ground_truth, input_dir = make_case(tmp_path, "hecktor2026", patients)
    document = json.loads((input_dir / "predictions.json").read_text())
    document = [job for job in document if job["inputs"][0]["image"]["name"] != "S3__CT.nii.gz"]
    (input_dir / "predictions.json").write_text(json.dumps(document))
    run = evaluate_cli("hecktor2026", input_dir, ground_truth=ground_truth)
    assert run.exit_code == 0, run.stderr
    assert run.metrics["missing"]["jobs"] == ["S3"] and run.metrics["missing"]["segmentation"] == ["S3"]


def test_hpv_balanced_accuracy(tmp_path, evaluate_cli):
    truth, predicted = [1, 1, 1, 0, 0], [True, False, True, False, True]
    patients = {f"H{i}": Patient(clinical={"HPV Status": t}, outputs={HPV: p})
                for i, (t, p) in enumerate(zip(truth, predicted, strict=True))}  # fmt: skip
    run = run_case(tmp_path, evaluate_cli, "hecktor2025-task3", patients)
    assert run.exit_code == 0, run.stderr
    assert run.metrics["aggregates"]["hpv"]["balanced_accuracy"] == pytest.approx((2 / 3 + 1 / 2) / 2)


def test_resample_nearest_option(tmp_path, evaluate_cli):
    patients = golden_segmentation()
    coarse = to_image(line((0, 4))[:, :, ::2].copy(), (1.0, 1.0, 4.0))  # pred on a 2x coarser grid
    coarse.SetOrigin((1.0, 0.0, 0.0))  # voxel centres 1, 5, 9, 13, 17 mm cover 0..2 of the 2 mm grid
    patients["C"].prediction = coarse
    refused = run_case(tmp_path / "a", evaluate_cli, "hecktor2025-task1", patients)
    assert refused.exit_code != 0 and "C" in refused.last_error_line and "size" in refused.last_error_line
    resampled = run_case(tmp_path / "b", evaluate_cli, "hecktor2025-task1", patients, "--set", "resample=nearest")
    assert resampled.exit_code == 0, resampled.stderr
    assert resampled.metrics["case"]["C"]["dice_gtvp"] > 0


def bad_image(kind: str) -> sitk.Image | Path | np.ndarray:
    good = to_image(line((1, 5)), (1.0, 1.0, 2.0))
    if kind == "size":
        return to_image(line((1, 5), length=11), (1.0, 1.0, 2.0))
    if kind == "spacing":
        return to_image(line((1, 5)), (1.0, 1.0, 2.5))
    if kind == "origin":
        good.SetOrigin((0.0, 0.0, 5.0))
    elif kind == "direction":
        good.SetDirection((1.0, 0.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0, 1.0))
    elif kind == "label 3":
        return to_image(line((1, 5), label=3), (1.0, 1.0, 2.0))
    elif kind == "label -1":
        return to_image(line((1, 5)).astype(np.int16) * -1, (1.0, 1.0, 2.0))
    elif kind == "float":
        return to_image(line((1, 5)).astype(np.float32), (1.0, 1.0, 2.0))
    return good


@pytest.mark.parametrize(
    ("kind", "words"),
    [("size", "size"), ("spacing", "spacing"), ("origin", "origin"), ("direction", "direction"),
     ("label 3", "label 3"), ("label -1", "label -1"), ("float", "32-bit float"), ("truncated", "could not be read")],
)  # fmt: skip
def test_bad_segmentations_are_errors_naming_the_patient(tmp_path, evaluate_cli, kind, words):
    patients = golden_segmentation()
    if kind == "truncated":
        path = tmp_path / "truncated.mha"
        sitk.WriteImage(bad_image("good"), str(path))
        path.write_bytes(path.read_bytes()[:-6])
        patients["B"].prediction = path
    else:
        patients["B"].prediction = bad_image(kind)
    patients["B"].spacing = (1.0, 1.0, 2.0)
    run = run_case(tmp_path, evaluate_cli, "hecktor2025-task1", patients)
    assert run.exit_code != 0
    assert not run.wrote_metrics
    assert "B" in run.last_error_line and words in run.last_error_line, run.last_error_line
    assert "Traceback" not in run.last_error_line


@pytest.mark.parametrize(
    ("socket", "value", "words"),
    [(T_STAGE, "T5", "T stage"), (N_STAGE, 3, "N stage"), (RFS, "abc", "not a number")],
)
def test_bad_values_are_errors_naming_the_patient(tmp_path, evaluate_cli, socket, value, words):
    patients = staging_patients()
    patients["S4"].outputs[socket] = value
    run = run_case(tmp_path, evaluate_cli, "hecktor2026", patients)
    assert run.exit_code != 0 and not run.wrote_metrics
    assert "S4" in run.last_error_line and words in run.last_error_line, run.last_error_line


def test_bad_hpv_status_is_an_error(tmp_path, evaluate_cli):
    patients = {f"H{i}": Patient(clinical={"HPV Status": i % 2}, outputs={HPV: True}) for i in range(3)}
    patients["H1"].outputs[HPV] = "yes"
    run = run_case(tmp_path, evaluate_cli, "hecktor2025-task3", patients)
    assert run.exit_code != 0 and not run.wrote_metrics
    assert "H1" in run.last_error_line and "boolean" in run.last_error_line


def test_surface_metrics_can_be_switched_off(tmp_path, evaluate_cli):
    run = run_case(tmp_path, evaluate_cli, "hecktor2025-task1", golden_segmentation(), "--set", "surface_metrics=false")
    assert run.exit_code == 0, run.stderr
    assert run.metrics["case"]["A"]["hd95_gtvp"] is None and run.metrics["settings"]["surface_metrics"] is False
    assert run.metrics["aggregates"]["segmentation"]["dice_gtvp"] == pytest.approx(0.75)


def test_invalid_stage_as_misclassification_option(tmp_path, evaluate_cli):
    patients = staging_patients()
    patients["S0"].outputs[T_STAGE] = "T5"
    run = run_case(tmp_path, evaluate_cli, "hecktor2026", patients, "--set", "invalid_stage=misclassification")
    assert run.exit_code == 0, run.stderr
    expected = balanced_accuracy_score(STAGES_T[0], ["-", *STAGES_T[1][1:]])
    assert run.metrics["aggregates"]["staging"]["balanced_accuracy_t"] == pytest.approx(expected, abs=1e-12)


def test_nan_rfs_is_an_error(tmp_path, evaluate_cli):
    patients = staging_patients()
    ground_truth, input_dir = make_case(tmp_path, "hecktor2026", patients)
    job = next(j for j in json.loads((input_dir / "predictions.json").read_text())
               if j["inputs"][0]["image"]["name"] == "S2__CT.nii.gz")  # fmt: skip
    (input_dir / job["pk"] / "output" / "rfs.json").write_text("NaN")
    run = evaluate_cli("hecktor2026", input_dir, ground_truth=ground_truth)
    assert run.exit_code != 0 and not run.wrote_metrics
    assert "S2" in run.last_error_line and "NaN" in run.last_error_line


@pytest.mark.parametrize("problem", ["duplicate", "unknown"])
def test_duplicate_and_unknown_patients(tmp_path, evaluate_cli, problem):
    patients = golden_segmentation()
    scratch = tmp_path / "pred.mha"
    sitk.WriteImage(to_image(line((1, 5)), (1.0, 1.0, 2.0)), str(scratch))
    names = ["A", "B", "C", "A"] if problem == "duplicate" else ["A", "B", "C", "Z-404"]
    jobs = [JobSpec({CT: f"{n}__CT.mha", PET: f"{n}__PT.mha"}, {SEGMENTATION_2025: scratch}) for n in names]
    run = run_case(tmp_path, evaluate_cli, "hecktor2025-task1", patients, jobs=jobs)
    assert run.exit_code != 0 and not run.wrote_metrics
    assert names[-1] in run.last_error_line, run.last_error_line


def official_2025_aggregated_dice(pairs: list[tuple[Path, Path]]) -> list[float]:
    """The semantics of BioMedIA-MBZUAI/HECKTOR2025 Task1/utils/metrics.py ``DiceAggScore``, written
    with the SimpleITK filters it uses: per patient and label, TP = Dice * (V_gt + V_pred) / 2 in mm³
    (Dice 0 where SimpleITK has none), summed; 2 * sum TP / sum (V_gt + V_pred)."""
    tp, volume = np.zeros(2), np.zeros(2)
    for truth_path, prediction_path in pairs:
        truth, prediction = sitk.ReadImage(str(truth_path)), sitk.ReadImage(str(prediction_path))
        overlap = sitk.LabelOverlapMeasuresImageFilter()
        overlap.Execute(truth, prediction)
        voxel = float(np.prod(truth.GetSpacing()))
        for k, label in enumerate((1, 2)):
            sizes = 0.0
            for image in (truth, prediction):
                statistics = sitk.LabelStatisticsImageFilter()
                statistics.Execute(image, image)
                sizes += statistics.GetCount(label) * voxel if statistics.HasLabel(label) else 0.0
            try:
                score = overlap.GetDiceCoefficient(label)
            except RuntimeError:
                score = 0.0
            tp[k] += score * sizes / 2
            volume[k] += sizes
    return [2 * tp[k] / volume[k] if volume[k] else 1.0 for k in range(2)]


@pytest.mark.filterwarnings("ignore:y_pred contains classes not in y_true")  # resamples without a predicted class
@pytest.mark.parametrize("challenge", CHALLENGES)
def test_demo_runs(evaluate_cli, challenge):
    run = evaluate_cli(challenge, DEMO_INPUT / challenge)
    assert run.exit_code == 0, run.stderr
    if challenge == "hecktor2025-task1":  # images read in workers: the same bytes with another pool size
        again = evaluate_cli(challenge, DEMO_INPUT / challenge, "--workers", "1")
        assert (run.output / "metrics.json").read_bytes() == (again.output / "metrics.json").read_bytes()
        pairs = []
        for job in json.loads((DEMO_INPUT / challenge / "predictions.json").read_text()):
            patient = patient_of_image(job["inputs"][0]["image"]["name"])
            folder = DEMO_INPUT / challenge / job["pk"] / "output" / SEGMENTATION_2025.relative_path
            pairs.append((GROUND_TRUTH / challenge / "labels" / f"{patient}.mha", next(folder.iterdir())))
        segmentation = run.metrics["aggregates"]["segmentation"]
        found = [segmentation["dice_gtvp"], segmentation["dice_gtvn"]]
        assert found == pytest.approx(official_2025_aggregated_dice(pairs), abs=1e-12)
    if challenge == "hecktor2025-task2":  # risks as given; every patient has a prediction: lifelines applies
        clinical, outputs = demo_clinical(challenge), demo_outputs(challenge)
        patients = sorted(p for p in clinical if clinical[p]["RFS"])
        time = np.array([float(clinical[p]["RFS"]) for p in patients])
        event = np.array([clinical[p]["Relapse"] == "1" for p in patients])
        risk = np.array([float(outputs[p]["rfs"]) for p in patients])
        expected = lifelines_c_index(time, -risk, event)  # lifelines: higher score = longer survival
        prognosis = run.metrics["aggregates"]["prognosis"]
        assert prognosis["c_index"] == pytest.approx(expected, abs=1e-12)
        interval = percentile_bootstrap(lambda i: harrell_loop(time[i], event[i], risk[i]), len(patients))
        assert (prognosis["c_index_ci_low"], prognosis["c_index_ci_high"]) == pytest.approx(interval, abs=1e-12)
    if challenge == "hecktor2025-task3":
        clinical, outputs = demo_clinical(challenge), demo_outputs(challenge)
        patients = sorted(p for p in clinical if clinical[p]["HPV Status"])
        truth = np.array([clinical[p]["HPV Status"] == "1" for p in patients])
        predicted = np.array([outputs[p].get("hpv-status") is True for p in patients])
        hpv = run.metrics["aggregates"]["hpv"]
        assert hpv["balanced_accuracy"] == pytest.approx(balanced_accuracy_score(truth, predicted), abs=1e-12)
        interval = percentile_bootstrap(lambda i: balanced_accuracy_score(truth[i], predicted[i]), len(patients))
        found = (hpv["balanced_accuracy_ci_low"], hpv["balanced_accuracy_ci_high"])
        assert found == pytest.approx(interval, abs=1e-12)
    if challenge != "hecktor2026":
        return
    metrics = run.metrics
    assert metrics["missing"]["prognosis"] == ["MDA-004"]
    assert metrics["settings"]["rfs_output"] == "time"
    for subtask, values in demo_2026_expected().items():
        block = metrics["aggregates"][subtask]
        for key, (value, interval) in values.items():
            assert block[key] == pytest.approx(value, abs=1e-12), (subtask, key)
            found = (block[f"{key}_ci_low"], block[f"{key}_ci_high"])
            assert found == pytest.approx(interval, abs=1e-12), (subtask, key)


def demo_2026_expected() -> dict[str, dict[str, tuple[float, tuple[float, float]]]]:
    """Values and 95% CIs of the HECKTOR 2026 demo computed here: volumes with SimpleITK and numpy,
    balanced accuracy with scikit-learn, the C-index as the pair loop (checked against lifelines where
    no prediction is missing), each CI an independent percentile bootstrap with the evaluation's draws."""
    clinical, outputs = demo_clinical("hecktor2026"), demo_outputs("hecktor2026")
    patients = sorted(clinical)
    intersections, totals = np.zeros((len(patients), 2)), np.zeros((len(patients), 2))
    for row, patient in enumerate(patients):
        reference = sitk.ReadImage(str(GROUND_TRUTH / "hecktor2026" / "labels" / f"{patient}.mha"))
        truth = sitk.GetArrayFromImage(reference)
        predicted = sitk.GetArrayFromImage(sitk.ReadImage(str(outputs[patient]["segmentation"])))
        voxel = float(np.prod(reference.GetSpacing()))
        for column, label in enumerate((1, 2)):
            intersections[row, column] = np.count_nonzero((truth == label) & (predicted == label)) * voxel
            totals[row, column] = (np.count_nonzero(truth == label) + np.count_nonzero(predicted == label)) * voxel
    gtvp, gtvn = (
        aggregated_dice_of(intersections[:, 0], totals[:, 0]),
        aggregated_dice_of(intersections[:, 1], totals[:, 1]),
    )
    everyone = np.arange(len(patients))

    def score(indices):
        return (gtvp(indices) + gtvn(indices)) / 2

    segmentation = {name: (statistic(everyone), percentile_bootstrap(statistic, len(patients)))
                    for name, statistic in (("dice_gtvp", gtvp), ("dice_gtvn", gtvn), ("score", score))}  # fmt: skip

    def stage(text, axis):
        return text.strip().upper()[:2] if isinstance(text, str) and text.strip().upper()[:2] in (
            [f"T{k}" for k in range(1, 5)] if axis == "T" else [f"N{k}" for k in range(4)]) else "invalid"  # fmt: skip

    truth_t = np.array([clinical[p]["T-stage"] for p in patients])
    truth_n = np.array([clinical[p]["N-stage"] for p in patients])
    predicted_t = np.array([stage(outputs[p].get("t-stage"), "T") for p in patients])
    predicted_n = np.array([stage(outputs[p].get("n-stage"), "N") for p in patients])

    @functools.cache
    def scores(drawn: bytes) -> tuple[float, float]:  # the score's resamples reuse T's and N's
        indices = np.frombuffer(drawn, dtype=np.int64)
        return (
            balanced_accuracy_score(truth_t[indices], predicted_t[indices]),
            balanced_accuracy_score(truth_n[indices], predicted_n[indices]),
        )

    def t_score(indices):
        return scores(np.asarray(indices, dtype=np.int64).tobytes())[0]

    def n_score(indices):
        return scores(np.asarray(indices, dtype=np.int64).tobytes())[1]

    staging = {name: (statistic(everyone), percentile_bootstrap(statistic, len(patients)))
               for name, statistic in (("balanced_accuracy_t", t_score), ("balanced_accuracy_n", n_score),
                                       ("score", lambda i: (t_score(i) + n_score(i)) / 2))}  # fmt: skip
    time = np.array([float(clinical[p]["RFS"]) for p in patients])
    event = np.array([clinical[p]["Relapse"] == "1" for p in patients])
    risk = np.array([-outputs[p]["rfs"] if "rfs" in outputs[p] else np.nan for p in patients])  # days: higher = later
    present = np.isfinite(risk)
    complete = lifelines_c_index(time[present], -risk[present], event[present])
    assert harrell_loop(time[present], event[present], risk[present]) == pytest.approx(complete, abs=1e-12)

    def c_index(indices):
        return harrell_loop(time[indices], event[indices], risk[indices])

    prognosis = {"c_index": (c_index(everyone), percentile_bootstrap(c_index, len(patients)))}
    return {"segmentation": segmentation, "staging": staging, "prognosis": prognosis}


def test_weighted_balanced_accuracy_equals_sklearn():
    rng = np.random.default_rng(0)
    truth = rng.choice(["T1", "T2", "T3", "T4"], 30)
    predicted = np.where(rng.random(30) < 0.6, truth, rng.choice(["T1", "T2", "-"], 30))
    weights = rng.integers(0, 3, size=(6, 30))
    expected = [balanced_accuracy_score(truth, predicted, sample_weight=w) for w in weights]
    assert balanced_accuracy(truth, predicted, weights) == pytest.approx(expected, abs=1e-12)


def patient_of_image(name: str) -> str:
    """The patient of a CT's name, as the declarations' [cases] strip_suffixes and strip take it."""
    cases = get("hecktor2026").declaration.cases
    return strip_marker(stem(name, cases.strip_suffixes), cases.strip)


def test_patient_of_image():
    assert patient_of_image("CHUM-001__CT.mha") == "CHUM-001"
    assert patient_of_image("HGJ-7__CT.nii.gz") == "HGJ-7"
    assert patient_of_image("MDA-3.nii") == "MDA-3"
