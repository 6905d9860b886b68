"""``python -m evaluation``: see evaluation/cli.py."""

from evaluation.cli import main

raise SystemExit(main())
