"""The built-in challenges, one module each (and ``declared.py``: the packaged declarations). Each
imports the contract (``evaluation.contract``), ``platform/`` and ``metrics/``, never another
challenge; ``evaluation.registry`` finds them by name."""
