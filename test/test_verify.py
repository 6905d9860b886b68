"""``python -m evaluation.verify`` (gc-verify): the declaration against official evaluations run as commands,
on submissions generated from the declaration (evaluation/declarative/synthesize.py).

References, each run live here (their versions pinned in requirements-dev.txt):
- picai_eval 1.4.13 (github DIAGNijmegen/picai_eval, ``picai_eval.evaluate``), the official PI-CAI evaluation,
  behind test/verify_references/picai_eval_command.py, against evaluation/declarations/picai2022.toml;
- DeepMind's surface-distance 0.1 (github google-deepmind/surface-distance, ``surface_distance.metrics``)
  behind test/verify_references/surface_distance_command.py, against test/verify_references/segmentation.toml.
The evalutils container (Docker) is test/test_verify_docker.py. For each: the correct declaration verifies
clean, and a declaration with one key wrong is caught, naming the number and the smallest case.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from conftest import REPO, documented_section

from evaluation import verify
from evaluation.provenance import tree_sha256

REFERENCES = REPO / "test" / "verify_references"
sys.path.insert(0, str(REFERENCES))
from ground_truth import write_ground_truth  # noqa: E402

PICAI = REPO / "evaluation" / "declarations" / "picai2022.toml"
SEGMENTATION = REFERENCES / "segmentation.toml"
PICAI_COMMAND = f"{sys.executable} {REFERENCES / 'picai_eval_command.py'} {{input}} {{ground_truth}} {{output}}"
NSD_COMMAND = f"{sys.executable} {REFERENCES / 'surface_distance_command.py'} {{input}} {{ground_truth}} {{output}} 2.0"


def picai_ground_truth(folder: Path, cases: tuple[str, ...] = ("case-00", "case-01", "case-02", "case-05")) -> Path:
    """A few cases of the bundled PI-CAI demo's ground truth (benign and malignant), to keep the runs short."""
    (folder / "labels").mkdir(parents=True)
    for case in cases:
        (folder / "labels" / f"{case}.mha").write_bytes(
            (REPO / "ground-truth" / "picai2022" / "labels" / f"{case}.mha").read_bytes()
        )
    return folder


def verified(capsys, tmp_path: Path, *arguments: str) -> tuple[int, list[str], dict]:
    code = verify.main([*arguments, "--work", str(tmp_path / "work"), "--save", str(tmp_path / "smallest"),
                        "--json", str(tmp_path / "report.json")])  # fmt: skip
    captured = capsys.readouterr()
    report = json.loads((tmp_path / "report.json").read_text()) if (tmp_path / "report.json").is_file() else {}
    return code, (captured.out + captured.err).splitlines(), report


def wrong(tmp_path: Path, declaration: Path, old: str, new: str) -> Path:
    text = declaration.read_text()
    assert old in text
    path = tmp_path / declaration.name
    path.write_text(text.replace(old, new))
    return path


PICAI_MAP = """[verify.map]
auroc = "aggregates.auroc"
AP = "aggregates.AP"
sensitivity_at_1fp = "aggregates.sensitivity_at_1fp"
score = "aggregates.ranking_score"
"""


@pytest.mark.slow
def test_picai_eval_verifies_the_picai2022_declaration_clean(tmp_path, capsys):
    (tmp_path / "map.toml").write_text(PICAI_MAP)
    gt = picai_ground_truth(tmp_path / "gt")
    code, lines, report = verified(capsys, tmp_path, "--challenge", str(PICAI), "--reference-command", PICAI_COMMAND,
                                   "--reference-layout", "flat", "--ground-truth", str(gt),
                                   "--synthesize", "3", "--seed", "1", "--map", str(tmp_path / "map.toml"))  # fmt: skip
    assert code == 0, "\n".join(lines)
    assert report["counts"] == {"equal": 4, "differs": 0, "unmapped": 0, "ignored": 0}
    assert lines[-1].startswith("verified: 4 equal, 0 differ, 0 unmapped, 0 ignored of 4 reference numbers")


@pytest.mark.slow
def test_a_wrong_min_overlap_is_caught_with_the_smallest_case(tmp_path, capsys):
    (tmp_path / "map.toml").write_text(PICAI_MAP)
    declaration = wrong(tmp_path, PICAI, "min_overlap = 0.1 ", "min_overlap = 0.5 ")
    code, lines, report = verified(capsys, tmp_path, "--challenge", str(declaration), "--reference-command",
                                   PICAI_COMMAND, "--reference-layout", "flat", "--ground-truth",
                                   str(picai_ground_truth(tmp_path / "gt")), "--synthesize", "3", "--seed", "1",
                                   "--map", str(tmp_path / "map.toml"))  # fmt: skip
    assert code == 1
    assert lines[-1].startswith("NOT verified")
    shrunk = next(row["difference"] for row in report["numbers"] if row.get("difference", {}).get("smallest"))
    assert shrunk["smallest"].count(":") == 1, shrunk  # one case, one output: "case-xx: cspca-detection-map <variant>"
    saved = Path(shrunk["saved"])
    assert (saved / "input" / "predictions.json").is_file() and (saved / "case.json").is_file()
    assert any(line.startswith(f"differs   {shrunk['path']} vs ") and shrunk["smallest"] in line for line in lines)


@pytest.mark.slow
def test_surface_distance_verifies_the_declaration_clean_and_catches_a_wrong_tolerance(tmp_path, capsys):
    gt = write_ground_truth(tmp_path / "gt")
    arguments = ("--reference-command", NSD_COMMAND, "--reference-layout", "flat", "--ground-truth", str(gt),
                 "--synthesize", "3", "--seed", "3")  # fmt: skip
    code, lines, report = verified(capsys, tmp_path / "right", "--challenge", str(SEGMENTATION), *arguments)
    assert code == 0, "\n".join(lines)
    assert report["counts"]["equal"] == 5 and report["counts"]["differs"] == 0  # four cases and the mean
    declaration = wrong(tmp_path, SEGMENTATION, "tolerance_mm = 2.0", "tolerance_mm = 1.0")
    code, lines, report = verified(capsys, tmp_path / "wrong", "--challenge", str(declaration), *arguments)
    assert code == 1
    shrunk = next(row["difference"] for row in report["numbers"] if row.get("difference", {}).get("smallest"))
    assert shrunk["path"].startswith("case.case-") and shrunk["smallest"].count(":") == 1, shrunk
    assert shrunk["smallest"].startswith(shrunk["path"].split(".")[1])  # the case of the number that differs


def test_synthesize_writes_the_same_inputs_for_the_same_seed(tmp_path):
    """Reproducible by seed on any machine: the generated platform inputs hash to the recorded value."""
    gt = write_ground_truth(tmp_path / "gt")
    hashes = []
    for attempt in ("a", "b"):
        verifier = verify.Verifier(str(SEGMENTATION), verify.Reference(command="true"), gt, tmp_path / attempt,
                                   verify.NumberMap(), seed=11, log=lambda line: None)  # fmt: skip
        submissions = verifier.synthesize(2)
        hashes.append([tree_sha256(verifier.write(s, tmp_path / attempt / str(k))[0], "a generated file")
                       for k, s in enumerate(submissions)])  # fmt: skip
    assert hashes[0] == hashes[1]
    assert hashes[0] == RECORDED


RECORDED = [
    "e78b8915cb20b1278771282d7cdd982aba1e9708633f9461c1bc26b80941b5fe",
    "edb7b3cf5e39480d504b704085d8d12c7b3eabad6595feef8b1707ef712d7982",
]  # sha256 of the two platform inputs (evaluation.provenance.tree_sha256), seed 11


def test_every_output_kind_has_its_variants_first_the_identical_copy():
    from evaluation.declarative.output_kinds import KINDS
    from evaluation.declarative.synthesize import SYNTHESIS

    assert set(SYNTHESIS) == set(KINDS)
    assert all(callable(entry.variants) for entry in SYNTHESIS.values())


def test_the_map_pairs_positions_wildcards_and_reasons():
    number_map = verify.NumberMap((("case.Dice.#", "case.#.dice"), ("a.*.b", "x.*")), (("a.skip.b", "why"),))
    assert number_map.resolve("case.Dice.1", ["c0", "c1"]) == ("map", "case.c1.dice")
    assert number_map.resolve("case.Dice.2", ["c0", "c1"]) == ("unmapped", "")
    assert number_map.resolve("a.k.b", []) == ("map", "x.k")
    assert number_map.resolve("a.skip.b", []) == ("ignore", "why")


def test_a_bad_map_is_one_line(tmp_path, capsys):
    (tmp_path / "map.toml").write_text("[verify.map]\nx = 1\n")
    code = verify.main(["--challenge", str(SEGMENTATION), "--reference-command", "true", "--synthesize", "1",
                        "--map", str(tmp_path / "map.toml"), "--work", str(tmp_path / "w")])  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and err[-1].endswith("[verify.map] must map reference paths to strings.")
    assert not (tmp_path / "w").exists()


@pytest.mark.slow
def test_the_readme_guide_runs_as_it_stands(tmp_path):
    """The first command block of the README's "Move an evaluation container to a declaration", run from a
    folder laid out like the repository root (its test/ linked), with this interpreter as ``python``."""
    import os
    import re
    import subprocess

    section = documented_section("Move an evaluation container to a declaration")
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    (tmp_path / "test").symlink_to(REPO / "test")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')  # a link would lose the venv
    (bin_dir / "python").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": str(REPO)}
    done = subprocess.run(["bash", "-ec", block], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith("verified: 5 equal, 0 differ, 0 unmapped, 0 ignored of 5 reference numbers over 3 ")


SELF_MAP = """[verify.map]
"aggregates.**" = "aggregates.**"
"case.**" = "case.**"

[verify.ignore]
"settings.**" = "the settings echo"
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    ("challenge", "ground_truth"),
    [
        ("kits-example", "kits-example"),  # segmentation, number (CSV reference)
        ("midog2021", "midog2021"),  # points
        ("hecktor2025-task3", "hecktor2025-task3"),  # boolean
        ("cibmtr2025", "cibmtr2025"),  # a prediction-file phase (CSV)
        (str(REFERENCES / "classes.toml"), None),  # probabilities, boolean, choice on a synthetic ground truth
        (str(SEGMENTATION), None),  # a synthetic ground truth with an empty reference case
    ],
)
def test_every_output_kind_verifies_against_our_own_command(tmp_path, capsys, challenge, ground_truth):
    """Our evaluation as the reference command: every generated variant of every kind goes through make_input,
    both sides and the pairing, and must come out equal (the generator's own check: nothing it writes is read
    differently by the two paths)."""
    (tmp_path / "map.toml").write_text(SELF_MAP)
    command = f"{sys.executable} -m evaluation --challenge {challenge} --input {{input}} --output {{output}} "
    command += "--ground-truth {ground_truth}"
    where = ("--ground-truth", str(REPO / "ground-truth" / ground_truth)) if ground_truth else ()
    code, lines, report = verified(capsys, tmp_path, "--challenge", challenge, "--reference-command", command, *where,
                                   "--synthesize", "2", "--seed", "5", "--map", str(tmp_path / "map.toml"))  # fmt: skip
    assert code == 0, "\n".join(lines[-15:])
    assert report["counts"]["equal"] > 0 and report["counts"]["differs"] == report["counts"]["unmapped"] == 0


def test_suggestions_of_every_case_are_written_once_as_a_pattern():
    suggested = {
        "case.DiceCoefficient.0": "case.c0.dice",
        "case.DiceCoefficient.1": "case.c1.dice",
        "case.c0.nsd": "case.c0.nsd_lesion",
        "case.c1.nsd": "case.c1.nsd_lesion",
        "mean": "aggregates.m",
    }
    assert verify.generalised(suggested, ["c0", "c1"]) == {
        "mean": "aggregates.m",
        "case.DiceCoefficient.#": "case.#.dice",
        "case.*.nsd": "case.*.nsd_lesion",
    }


@pytest.mark.slow
def test_the_organizers_own_outputs_verify(tmp_path, capsys):
    """--outputs DIR: outputs as make_input reads them (here those a synthesized run wrote), one submission."""
    (tmp_path / "map.toml").write_text(SELF_MAP)
    command = f"{sys.executable} -m evaluation --challenge kits-example --input {{input}} --output {{output}} "
    command += "--ground-truth {ground_truth}"
    gt = str(REPO / "ground-truth" / "kits-example")
    first = verified(capsys, tmp_path / "a", "--challenge", "kits-example", "--reference-command", command,
                     "--ground-truth", gt, "--synthesize", "1", "--map", str(tmp_path / "map.toml"))  # fmt: skip
    assert first[0] == 0
    outputs = tmp_path / "a" / "work" / "run-001" / "outputs"
    code, lines, report = verified(capsys, tmp_path / "b", "--challenge", "kits-example", "--reference-command",
                                   command, "--ground-truth", gt, "--outputs", str(outputs), "--map",
                                   str(tmp_path / "map.toml"))  # fmt: skip
    assert code == 0, "\n".join(lines[-10:])
    assert report["submissions"] == 1 and report["counts"]["equal"] == first[2]["counts"]["equal"]


@pytest.mark.parametrize(
    ("arguments", "line"),
    [
        (["--challenge", "no-such-challenge", "--synthesize", "1"], "Unknown challenge 'no-such-challenge'"),
        (["--challenge", str(SEGMENTATION), "--synthesize", "0"], "--synthesize needs at least 1 submission."),
        (["--synthesize", "1"], "No challenge given"),
    ],
)
def test_a_wrong_command_line_is_one_line(tmp_path, capsys, monkeypatch, arguments, line):
    monkeypatch.delenv("EVALUATION_CHALLENGE", raising=False)
    code = verify.main([*arguments, "--reference-command", "true", "--work", str(tmp_path / "w")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and err[-1].startswith(line)


def test_gc_verify_is_a_console_command():
    assert 'gc-verify = "evaluation.verify:main"' in (REPO / "pyproject.toml").read_text()


def test_save_never_replaces_a_folder_it_did_not_write(tmp_path, capsys):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "keep.txt").write_text("organizer's file")
    code = verify.main(["--challenge", str(SEGMENTATION), "--reference-command", "true", "--synthesize", "1",
                        "--save", str(tmp_path / "mine"), "--work", str(tmp_path / "w")])  # fmt: skip
    assert code == 1 and "is not a case verify saved" in capsys.readouterr().err.strip().splitlines()[-1]
    assert (tmp_path / "mine" / "keep.txt").read_text() == "organizer's file"


@pytest.mark.parametrize(
    ("writes", "words"),
    [
        ("mkfifo {output}/metrics.json", "not a regular file"),  # a FIFO never hangs the comparison
        ("printf '{{\"a\": ' > {output}/metrics.json", "is not valid JSON"),
    ],
)
def test_a_reference_metrics_json_that_cannot_be_used_is_its_one_line(tmp_path, writes, words):
    """The reference's metrics.json goes through the project's one bounded JSON reader."""
    outcome = verify.Reference(command=writes, timeout=30).run(tmp_path / "in", tmp_path / "gt", tmp_path / "out")
    assert isinstance(outcome, str) and outcome.startswith("the reference wrote a metrics.json that cannot be used")
    assert words in outcome, outcome
