"""The registry's entries: ``declared.py`` makes one per packaged declaration
(``evaluation/declarations/*.toml``); ``evaluation.registry`` finds them by name."""
