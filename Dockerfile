# The evaluation method image, one per challenge: ./build.sh <challenge>
#
# Two stages. "packages" installs requirements.txt into a venv (a layer every challenge's build shares) and then,
# for a challenge without an image output, uninstalls the medical-image packages (requirements-images.txt:
# SimpleITK and the rest, about 300 MB); the image copies the venv alone. Instruction order keeps the large
# layers cached: metadata first, the dependencies next, the project's own files in one last step.
FROM --platform=linux/amd64 python:3.11-slim AS packages
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1
WORKDIR /opt/app
COPY requirements.txt requirements-images.txt /opt/app/
# The venv holds the requirements and nothing else: the base image's pip installs into it (--python) and
# checks the set is consistent, so pip and setuptools (about 26 MB) stay out of it. The packages' own test
# suites (scipy, pandas, numpy: about 100 MB) never run here.
RUN python -m venv --without-pip /opt/venv \
    && python -m pip --python /opt/venv/bin/python install -r requirements.txt \
    && python -m pip --python /opt/venv/bin/python check \
    && find /opt/venv/lib -depth -type d -name tests -prune -exec rm -rf {} +
ARG EVALUATION_CHALLENGE
COPY evaluation /opt/app/evaluation
RUN test -n "$EVALUATION_CHALLENGE" \
    && images="$(/opt/venv/bin/python -m evaluation.image_packages "$EVALUATION_CHALLENGE")" \
    && if [ "$images" = no ]; then \
         python -m pip --python /opt/venv/bin/python uninstall --yes -r requirements-images.txt \
         && python -m pip --python /opt/venv/bin/python check; \
       fi

FROM --platform=linux/amd64 python:3.11-slim
ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PATH=/opt/venv/bin:$PATH
WORKDIR /opt/app
RUN groupadd --system user && useradd --system --gid user --create-home user
USER user
ENTRYPOINT ["python", "-m", "evaluation"]

# owned by root: read-only for the user, as the project's files
COPY --from=packages /opt/venv /opt/venv

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
