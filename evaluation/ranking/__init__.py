"""The organizer's ranking tool: challengeR's ranking schemes, robustness analyses and a report.

``python -m evaluation.ranking`` (evaluation/ranking/cli.py), or as a library:
:mod:`evaluation.ranking.analysis` (``rank``, ``bootstrap``, ``analyse`` with typed results) and
:func:`evaluation.ranking.report.write_report`. Spec: ../shared/spec/ranking.md.
It reads long tables and metrics.json files only; it does not import ``evaluation.challenges``.
"""
