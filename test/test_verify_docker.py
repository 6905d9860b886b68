"""``python -m evaluation.verify --reference-image``: a real evalutils evaluation container as the reference.

The container is generated from evalutils' own template (evalutils 0.4.2 from PyPI, ``evalutils init evaluation
--kind Segmentation``; github comic/evalutils, ``evalutils/templates/evaluation``) with the one edit an
organizer makes (``NumberOfCasesValidator(num_cases=...)``: the number of test cases), built with its own
Dockerfile (built once, then reused under the tag ``verify-evalutils-seg``) and run as the platform runs it:
--network none, the memory limit, /input read-only, the ground truth mounted where it reads it. Against
test/verify_references/segmentation.toml, numbers paired by test/verify_references/evalutils-map.toml.
Skips when no Docker engine can be had (fails with EVALUATION_REQUIRE_DOCKER=1, as CI sets).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO
from test_docker import _why_no_engine

from evaluation import verify

pytestmark = [pytest.mark.docker, pytest.mark.slow]
REFERENCES = REPO / "test" / "verify_references"
sys.path.insert(0, str(REFERENCES))
from ground_truth import write_ground_truth  # noqa: E402

TAG = "verify-evalutils-seg"
CASES = 4  # write_ground_truth's
CACHE = Path(os.environ.get("EVALUATION_DOCKER_STATE", "/var/tmp/evaluation-docker")) / "verify-evalutils"


def _run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=1500)


@pytest.fixture(scope="module")
def evalutils_image() -> str:
    reason = _why_no_engine()
    if reason:
        if os.environ.get("EVALUATION_REQUIRE_DOCKER") == "1":
            pytest.fail(f"EVALUATION_REQUIRE_DOCKER=1 but {reason}")
        pytest.skip(reason)
    if _run("docker", "image", "inspect", TAG).returncode == 0:
        return TAG
    venv = CACHE / "venv"
    if not (venv / "bin" / "evalutils").exists():
        assert _run(sys.executable, "-m", "venv", str(venv)).returncode == 0
        # evalutils 0.4.2's command line needs click < 8.2 (AbbreviatedChoice.get_metavar)
        done = _run(str(venv / "bin" / "pip"), "install", "-q", "evalutils==0.4.2", "click<8.2")
        assert done.returncode == 0, done.stderr[-2000:]
    project = CACHE / "project"
    if not (project / "verifyseg" / "Dockerfile").exists():
        project.mkdir(parents=True, exist_ok=True)
        done = _run(str(venv / "bin" / "evalutils"), "init", "evaluation", "--kind", "Segmentation", "verifyseg",
                    cwd=project)  # fmt: skip
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    evaluation = project / "verifyseg" / "evaluation.py"
    text = evaluation.read_text()
    assert "num_cases=2" in text or f"num_cases={CASES}" in text
    evaluation.write_text(text.replace("num_cases=2", f"num_cases={CASES}"))
    done = _run("docker", "build", "--network", "host", "-t", TAG, str(project / "verifyseg"))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return TAG


def _verify(capsys, tmp_path: Path, declaration: Path, image: str) -> tuple[int, list[str], dict]:
    gt = write_ground_truth(tmp_path / "gt", cases=CASES)
    code = verify.main(["--challenge", str(declaration), "--reference-image", image, "--reference-layout", "flat",
                        "--ground-truth", str(gt), "--synthesize", "4", "--seed", "3", "--map",
                        str(REFERENCES / "evalutils-map.toml"), "--memory", "2g", "--work", str(tmp_path / "work"),
                        "--save", str(tmp_path / "smallest"), "--json", str(tmp_path / "report.json")])  # fmt: skip
    captured = capsys.readouterr()
    return code, (captured.out + captured.err).splitlines(), json.loads((tmp_path / "report.json").read_text())


def test_the_evalutils_container_verifies_the_declaration_clean(evalutils_image, tmp_path, capsys):
    code, lines, report = _verify(capsys, tmp_path, REFERENCES / "segmentation.toml", evalutils_image)
    assert code == 0, "\n".join(lines[-20:])
    assert report["counts"]["equal"] == 4 * CASES + 4 and report["counts"]["differs"] == 0
    assert report["counts"]["unmapped"] == 0 and report["counts"]["ignored"] > 0
    assert lines[-1].startswith("verified: 20 equal, 0 differ, 0 unmapped")


def test_a_wrong_missing_policy_is_caught_with_the_smallest_case(evalutils_image, tmp_path, capsys):
    """evalutils refuses a submission without a case's mask; a declaration scoring it as an empty mask is caught
    on the generated submission with a missing output, shrunk to that one case."""
    text = (REFERENCES / "segmentation.toml").read_text()
    declaration = tmp_path / "segmentation.toml"
    declaration.write_text(text.replace('missing = "error"', 'missing = "empty-mask"'))
    code, lines, report = _verify(capsys, tmp_path, declaration, evalutils_image)
    assert code == 1
    (refusal,) = report["refusals"][:1]
    assert refusal["ours"] == "scored it" and "no metrics.json" in refusal["reference"]
    assert refusal["smallest"].endswith("lesion-segmentation missing-output") and refusal["smallest"].count(":") == 1
    assert (Path(refusal["saved"]) / "input-flat").is_dir()
    assert lines[-1].startswith("NOT verified") and lines[-1].endswith("refused by one side only")
    assert report["counts"]["differs"] == 0  # every number agrees where both score
