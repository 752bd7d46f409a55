# syntax=docker/dockerfile:1
# dynamo-webhook image: wheels are built in the first stage; the final stage has no compilers,
# runs as a non-root UID and starts the HTTPS webhook server.
ARG PYTHON_IMAGE=python:3.11.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN apt-get update \
 && apt-get install -y --no-install-recommends build-essential \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pyproject.toml README.md ./
COPY app ./app
COPY conversion ./conversion
COPY defaulting ./defaulting
COPY validation ./validation
COPY certs ./certs
RUN python -m pip wheel --wheel-dir /wheels .

FROM ${PYTHON_IMAGE}
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
    DYNAMO_WEBHOOK_CERT_DIR=/tmp/k8s-webhook-server/serving-certs
RUN --mount=type=bind,from=build,source=/wheels,target=/wheels \
    python -m pip install --no-index --find-links=/wheels dynamo-webhook \
 && groupadd --gid 65532 nonroot \
 && useradd --uid 65532 --gid 65532 --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin nonroot
LABEL org.opencontainers.image.title="dynamo-webhook" \
      org.opencontainers.image.description="Admission and conversion webhook for the Dynamo operator's nvidia.com resources" \
      org.opencontainers.image.licenses="Apache-2.0"
# Runs with a read-only root filesystem in the cluster: only /tmp (an emptyDir) is written.
USER 65532:65532
EXPOSE 9443 8080
ENTRYPOINT ["dynamo-webhook", "serve"]
