"""``python -m evaluation.ranking``: see evaluation/ranking/cli.py."""

from evaluation.ranking.cli import main

raise SystemExit(main())
