"""``python test/patched_evaluation.py [--module M] [--score F] [--aggregate F] [--pool | --in-process] -- ARGS``

Runs ``python -m evaluation ARGS`` (or ``-m M``, e.g. ``evaluation.batch``) through ``runpy``, exactly
as ``-m`` does, ``os._exit`` included,
after replacing the challenge's ``score_case`` and/or ``aggregate`` with a test-only function of
``runner_cases`` and choosing where its cases run: for the subprocess tests of signals and memory
limits, which need a slow or memory-hungry case in a real process.
"""

from __future__ import annotations

import argparse
import runpy
import sys

import runner_cases

from evaluation.registry import get

if __name__ == "__main__":
    split = sys.argv.index("--")
    parser = argparse.ArgumentParser()
    parser.add_argument("--module", default="evaluation")
    parser.add_argument("--score")
    parser.add_argument("--aggregate")
    parser.add_argument("--pool", dest="in_process", action="store_false", default=None)
    parser.add_argument("--in-process", dest="in_process", action="store_true")
    patch = parser.parse_args(sys.argv[1:split])
    evaluation_args = sys.argv[split + 1 :]
    challenge = type(get(evaluation_args[evaluation_args.index("--challenge") + 1]))
    if patch.score:
        challenge.score_case = staticmethod(getattr(runner_cases, patch.score))
    if patch.aggregate:
        challenge.aggregate = getattr(runner_cases, patch.aggregate)
    if patch.in_process is not None:
        challenge.cases_in_process = patch.in_process
    sys.argv = [f"python -m {patch.module}", *evaluation_args]
    runpy.run_module(patch.module, run_name="__main__", alter_sys=True)
