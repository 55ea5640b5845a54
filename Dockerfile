# syntax=docker/dockerfile:1
# argo-why's image: the bot (`argo-why serve`), also `argo-why demo`, `explain`, `why`, `blame`.
#   docker buildx build --platform linux/amd64,linux/arm64 -t REGISTRY/argo-why:0.1.0 --push .
# deploy/README.md ("The image") says how the chart's image values map to what is pushed.
#
# The base is pinned by digest, so a rebuild gets the same Python and Debian bytes until the digest is changed on
# purpose. Refresh it with: docker buildx imagetools inspect python:3.12-slim  (the "Digest:" of the index).
ARG PYTHON_IMAGE=python:3.12-slim@sha256:f3fa41d74a768c2fce8016b98c191ae8c1bacd8f1152870a3f9f87d350920b7c

FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
WORKDIR /src
# Dependencies first (their layer survives code changes), exactly as locked, each file checked against its hash.
COPY requirements.lock requirements-build.lock ./
RUN python -m venv /opt/argo-why \
 && /opt/argo-why/bin/pip install --require-hashes --no-deps -r requirements.lock \
 && python -m venv /opt/build \
 && /opt/build/bin/pip install --require-hashes --no-deps -r requirements-build.lock
COPY pyproject.toml README.md ./
COPY bot ./bot
COPY handlers ./handlers
# The wheel is built with the locked setuptools (no build isolation: nothing unpinned is fetched), then installed
# without dependencies: they are all in the lock already.
RUN /opt/build/bin/pip wheel --no-deps --no-build-isolation -w /dist . \
 && /opt/argo-why/bin/pip install --no-deps /dist/argo_why-*.whl \
 && /opt/argo-why/bin/argo-why --help >/dev/null

FROM ${PYTHON_IMAGE}
LABEL org.opencontainers.image.title="argo-why" \
      org.opencontainers.image.description="Explains why an Argo CD Application stays OutOfSync" \
      org.opencontainers.image.licenses="Apache-2.0"
RUN groupadd --system --gid 10001 argo-why \
 && useradd --system --uid 10001 --gid 10001 --home-dir /nonexistent --no-create-home --shell /usr/sbin/nologin argo-why
COPY --from=build /opt/argo-why /opt/argo-why
ENV PATH=/opt/argo-why/bin:$PATH PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 PORT=8080
WORKDIR /tmp
# Numeric, so that Kubernetes' runAsNonRoot can check it; the chart runs it with a read-only root filesystem.
USER 10001:10001
EXPOSE 8080 9090
# For docker run and Compose; Kubernetes ignores HEALTHCHECK and uses the chart's probes (/readyz, /healthz).
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('PORT', '8080'), timeout=4)"]
ENTRYPOINT ["argo-why"]
CMD ["serve"]
