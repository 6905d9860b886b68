"""The per-case process pool: results in order, and no hang on a stalled or dying worker."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import runner_cases

from evaluation.contract import CaseTask
from evaluation.errors import EvaluationError
from evaluation.runner import run_cases


def _tasks(payloads):
    return [CaseTask(f"case-{p}", p) for p in payloads]


def test_results_in_task_order_with_progress():
    lines: list[str] = []
    results = run_cases(runner_cases.square, _tasks([3, 1, 2, 5]), {}, workers=2, case_timeout=60, log=lines.append)
    assert list(results.items()) == [("case-3", 9), ("case-1", 1), ("case-2", 4), ("case-5", 25)]
    assert "4/4 cases done" in lines[-1]


def test_stalled_case_is_stopped_and_named():
    start = time.monotonic()
    with pytest.raises(EvaluationError, match=r"case-0 took longer than 2 s"):
        run_cases(runner_cases.stall_on_payload_zero, _tasks([1, 0, 2]), {}, workers=2, case_timeout=2, log=print)
    assert time.monotonic() - start < 20


def test_dead_worker_is_reported_with_the_case():
    with pytest.raises(EvaluationError, match=r"worker process died while evaluating case case-0"):
        run_cases(runner_cases.die_on_payload_zero, _tasks([0]), {}, workers=1, case_timeout=60, log=print)


def test_submission_error_passes_through():
    with pytest.raises(EvaluationError, match=r"^Case case-0: the likelihoods are not a list\.$"):
        run_cases(runner_cases.reject_payload_zero, _tasks([2, 0]), {}, workers=2, case_timeout=60, log=print)


def test_unexpected_exception_is_an_internal_error_naming_the_case():
    logged: list[str] = []
    with pytest.raises(EvaluationError, match=r"internal error \(ZeroDivisionError\) while evaluating case case-0"):
        run_cases(runner_cases.crash_on_payload_zero, _tasks([0]), {}, workers=1, case_timeout=60, log=logged.append)
    assert "Traceback" in logged[0]


def test_cheap_cases_run_in_the_main_process_in_task_order():
    lines: list[str] = []
    results = run_cases(runner_cases.pid, _tasks([3, 1]), {}, workers=2, case_timeout=60, log=lines.append,
                        in_process=True)  # fmt: skip
    assert list(results) == ["case-3", "case-1"] and set(results.values()) == {os.getpid()}
    assert "2/2 cases done" in lines[-1]


def test_pool_cases_run_in_worker_processes():
    results = run_cases(runner_cases.pid, _tasks([3, 1]), {}, workers=2, case_timeout=60, log=print)
    assert os.getpid() not in results.values()


@pytest.mark.parametrize(
    ("score_case", "message"),
    [
        (runner_cases.reject_payload_zero, r"^Case case-0: the likelihoods are not a list\.$"),
        (runner_cases.crash_on_payload_zero, r"^internal error \(ZeroDivisionError\) while evaluating case case-0\.$"),
    ],
)
def test_an_in_process_case_that_fails_is_named(score_case, message):
    with pytest.raises(EvaluationError, match=message):
        run_cases(score_case, _tasks([2, 0]), {}, workers=1, case_timeout=60, log=lambda line: None, in_process=True)


def test_a_stalled_in_process_case_is_stopped_by_its_deadline():
    """In a process of its own (SIGALRM free, as under the CLI): the stall is cut at the deadline
    with the pool's sentence, and the previous SIGALRM handler is back afterwards."""
    script = (
        "import signal, runner_cases\n"
        "from evaluation.errors import EvaluationError\n"
        "from evaluation.contract import CaseTask\n"
        "from evaluation.runner import run_cases\n"
        "tasks = [CaseTask(f'case-{p}', p) for p in (1, 0, 2)]\n"
        "try:\n"
        "    run_cases(runner_cases.stall_on_payload_zero, tasks, {}, workers=1, case_timeout=1, log=print,\n"
        "              in_process=True)\n"
        "except EvaluationError as error:\n"
        "    print(error)\n"
        "print(signal.getsignal(signal.SIGALRM) == signal.SIG_DFL, signal.getitimer(signal.ITIMER_REAL))\n"
    )
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-c", script], cwd=Path(__file__).parent, capture_output=True, text=True,
                          timeout=60, env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])})  # fmt: skip
    assert done.returncode == 0, done.stderr
    expected = "the evaluation of case case-0 took longer than 1 s and was stopped."
    assert done.stdout.splitlines()[-2:] == [expected, "True (0.0, 0.0)"]
    assert time.monotonic() - start < 30


def test_in_process_cases_leave_a_sigalrm_in_use_alone():
    """Under pytest-timeout's own SIGALRM (or off the main thread) the cases run untimed and the
    owner's handler and timer are untouched."""

    def owner(signum, frame):
        return None

    handler = signal.signal(signal.SIGALRM, owner)
    signal.setitimer(signal.ITIMER_REAL, 100)
    try:
        results = run_cases(runner_cases.square, _tasks([3]), {}, workers=1, case_timeout=1, log=print, in_process=True)
        assert results == {"case-3": 9}
        assert 0 < signal.getitimer(signal.ITIMER_REAL)[0] <= 100 and signal.getsignal(signal.SIGALRM) is owner
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, handler)
