"""Regression: every bundled demo gives exactly the bytes in test/expected/<challenge>/metrics.json
(the file the Docker end-to-end test and test-run.sh compare the container's output with). The
numbers in those files are checked against each challenge's reference in test/challenges/.

After an intended change, regenerate with:
  python -m evaluation --challenge NAME --input test/input/NAME --output test/expected/NAME
and review the diff (python -m evaluation.compare OLD NEW).
"""

from __future__ import annotations

import pytest
from conftest import DEMO_INPUT, REPO

EXPECTED = REPO / "test" / "expected"
CHALLENGES = sorted(p.name for p in EXPECTED.iterdir() if (p / "metrics.json").is_file())


def test_every_demo_has_expected_metrics():
    assert sorted(p.name for p in DEMO_INPUT.iterdir() if p.is_dir()) == CHALLENGES


@pytest.mark.parametrize("challenge", CHALLENGES)
def test_demo_gives_the_expected_bytes(evaluate_cli, challenge):
    run = evaluate_cli(challenge, DEMO_INPUT / challenge)
    assert run.exit_code == 0, run.stderr
    assert (run.output / "metrics.json").read_bytes() == (EXPECTED / challenge / "metrics.json").read_bytes()
