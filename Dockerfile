# The evaluation method image, one per challenge: ./build.sh <challenge>
#
# Instruction order matters on the vfs storage driver used to build here, which copies the whole
# file system for every step: metadata steps come first, the large dependency layer next (shared by
# every challenge's image: the challenge is set after it), the project's own files in one last step.
FROM --platform=linux/amd64 python:3.11-slim

ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PATH=/opt/venv/bin:$PATH
WORKDIR /opt/app
RUN groupadd --system user && useradd --system --gid user --create-home user \
    && mkdir /opt/venv && chown user:user /opt/venv
USER user
ENTRYPOINT ["python", "-m", "evaluation"]

COPY requirements.txt /opt/app/
# The packages' own test suites (scipy, pandas, numpy: about 100 MB) never run here.
RUN python -m venv /opt/venv && python -m pip install --no-cache-dir -r /opt/app/requirements.txt \
    && find /opt/venv/lib -depth -type d -name tests -prune -exec rm -rf {} +

ARG EVALUATION_CHALLENGE
ENV EVALUATION_CHALLENGE=${EVALUATION_CHALLENGE}

# evaluation/ and ground-truth/ only (see .dockerignore), owned by root: read-only for the user.
COPY . /opt/app/
# Compiled once here (the user cannot write /opt/app): every run would otherwise compile the project's
# modules again, about 80 ms of a RARE25 evaluation (benchmarks/rare25_end_to_end.py). Hash-checked, so
# the bytecode follows the sources, not their timestamps.
USER root
RUN python -m compileall -q --invalidation-mode checked-hash /opt/app/evaluation
USER user
