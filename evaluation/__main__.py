"""``python -m evaluation``: see evaluation/cli.py.

Once metrics.json is written (or the error line printed) and the output flushed, the process ends
with ``os._exit``: tearing down the interpreter's large heaps (arrays, imported libraries) and
waiting for pool threads would only add time (about 0.4 s) after the result is already final.
"""

import os
import sys

from evaluation.cli import main

code = main()
sys.stdout.flush()
sys.stderr.flush()
os._exit(code)
