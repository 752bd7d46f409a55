# syntax=docker/dockerfile:1
# dynamo-webhook image, installed only from the lock files in requirements/ (every file checked
# against its sha256): the first stage downloads the locked wheels and builds the project's own
# wheel with the locked setuptools, its rule layer compiled by mypyc (the locked mypy, Debian's
# gcc: DYNAMO_WEBHOOK_COMPILE=1, see setup.py); the final stage has no compilers, installs both
# without a package index, runs as a non-root UID and starts the HTTPS webhook server.
# The base image is pinned by digest (the tag names it for people); its Python minor version is
# the one the lock is made for (3.11). Moving it: replace tag and digest together.
ARG PYTHON_IMAGE=python:3.11.16-slim-bookworm@sha256:c425d915a89a6dcd3183b1797ad9bd8878caff5a417f6371c8df93c8ea8b727f

FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore
WORKDIR /src
RUN apt-get update \
 && apt-get install --yes --no-install-recommends gcc libc6-dev \
 && rm -rf /var/lib/apt/lists/*
COPY requirements/build.txt requirements/runtime.txt requirements/compile.txt ./requirements/
RUN python -m pip install --require-hashes --only-binary=:all: -r requirements/build.txt \
 && python -m pip install --require-hashes --only-binary=:all: -r requirements/compile.txt \
 && python -m pip download --require-hashes --only-binary=:all: --dest /wheels -r requirements/runtime.txt
COPY pyproject.toml setup.py README.md ./
# Each top-level package pyproject.toml ships (tests/test_packages.py holds the two lists equal).
COPY apiserver ./apiserver
COPY app ./app
COPY certs ./certs
COPY conversion ./conversion
COPY defaulting ./defaulting
COPY domain ./domain
COPY gocompat ./gocompat
COPY kinds ./kinds
COPY validation ./validation
RUN DYNAMO_WEBHOOK_COMPILE=1 python -m pip wheel --no-deps --no-build-isolation --wheel-dir /dist . \
 && python -c "import sys, zipfile, glob; (w,) = glob.glob('/dist/*.whl'); sys.exit(not any(n.endswith('.so') for n in zipfile.ZipFile(w).namelist()))"

FROM ${PYTHON_IMAGE}
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore \
    DYNAMO_WEBHOOK_CERT_DIR=/tmp/k8s-webhook-server/serving-certs
RUN --mount=type=bind,from=build,source=/wheels,target=/wheels \
    --mount=type=bind,from=build,source=/dist,target=/dist \
    --mount=type=bind,from=build,source=/src/requirements,target=/requirements \
    python -m pip install --no-index --find-links=/wheels --require-hashes --only-binary=:all: -r /requirements/runtime.txt \
 && python -m pip install --no-index --no-deps /dist/dynamo_webhook-*.whl \
 && groupadd --gid 65532 nonroot \
 && useradd --uid 65532 --gid 65532 --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin nonroot
LABEL org.opencontainers.image.title="dynamo-webhook" \
      org.opencontainers.image.description="Admission and conversion webhook for the Dynamo operator's nvidia.com resources" \
      org.opencontainers.image.licenses="Apache-2.0"
# Runs with a read-only root filesystem in the cluster: only /tmp (an emptyDir) is written.
USER 65532:65532
EXPOSE 9443 8080
ENTRYPOINT ["dynamo-webhook", "serve"]
