"""Challenges as declarations: a TOML file (``schema``) evaluated by one shared engine (``engine``:
``reference``, ``answers``, ``segmentation``, ``aggregate``) over the metric adapters of ``measures``.
Packaged declarations live in ``evaluation/declarations/``; ``python -m evaluation --challenge
path/to/challenge.toml`` runs any other one."""
