"""``python -m evaluation``: see evaluation/cli.py.

OpenBLAS is limited to one thread before numpy loads: under the platform's per-process memory
limit (RLIMIT_DATA, set by sagemaker-shim) its thread buffers can fail to allocate and a matrix
product then spins instead of raising (seen at 250 MiB with the HECKTOR 2026 demo); one thread
costs nothing measurable here (the products are small; the cases already run in parallel). A limit
below ``MINIMUM_DATA_MIB`` is refused at once: there OpenBLAS's own start-up buffer (32 MiB) may not
fit, and it retries forever rather than fail (seen at 30 MiB); a limit too small to import the
libraries otherwise ends with a sentence for the organizer, not a bare ``MemoryError``.

Once metrics.json is written (or the error line printed) and the output flushed, the process ends
with ``os._exit``: tearing down the interpreter's large heaps (arrays, imported libraries) and
waiting for pool threads would only add time (about 0.4 s) after the result is already final.
"""

import os
import sys

from evaluation.platform.files import data_limit

MINIMUM_DATA_MIB = 128

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
limit = data_limit()
if limit is not None and limit < MINIMUM_DATA_MIB * 2**20:
    print(
        f"The memory limit per process ({limit / 2**20:.0f} MiB) is below the {MINIMUM_DATA_MIB} MiB the evaluation "
        "needs to load its libraries: raise the phase's memory limit (see python -m evaluation.phase --limits).",
        file=sys.stderr,
    )
    os._exit(1)

try:
    from evaluation.cli import main
except MemoryError:
    print(
        "The evaluation ran out of memory while loading its libraries: the phase's memory limit is too small "
        "(see python -m evaluation.phase --limits).",
        file=sys.stderr,
    )
    os._exit(1)

code = main()
sys.stdout.flush()
sys.stderr.flush()
os._exit(code)
