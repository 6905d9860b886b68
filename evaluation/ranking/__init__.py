"""The organizer's ranking tool: challengeR's ranking schemes, robustness analyses and a report.

``python -m evaluation.ranking``; see evaluation/ranking/cli.py and ../shared/spec/ranking.md.
It reads long tables and metrics.json files only; it does not import ``evaluation.challenges``.
"""
