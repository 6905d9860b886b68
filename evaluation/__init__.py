"""Evaluation container for biomedical image-analysis challenges on grand-challenge.org."""

__version__ = "0.1.0"
