"""grand-challenge.org input/output: predictions.json, sockets, images, ground truth, metrics.json.

Knows no challenge and no metric (see ../shared/spec/platform.md for the contract it implements).
"""
