# simkube-fn: one image for both functions (`serve mutate-create` or `serve reschedule-delete`): Knative
# Services (knative/manifests.ts) and plain Deployments (`manifests --platform kubernetes`) run it. OpenFaaS
# does not use this image: faas-cli builds its own from the node22 template and dist/openfaas/<function>/
# handler.js (npm run bundle:openfaas).
#
# The bundle is built inside the image (the `bundle` stage runs esbuild on the sources), never copied from the
# host's dist/. Two bases, both build arguments defaulting to the public images:
#   docker build -t dev.local/simkube-fn:$(node -p 'require("./package.json").version') .
# Where no registry is reachable, scripts/build-image.sh assembles both bases from Debian's packages and the
# npm registry's Node, and builds this file reproducibly with podman (docs/deploying.md, "The image").

# Node.js 26: the Active LTS line since 2026-10-28, supported until April 2029. On it mutate-create answers
# 1.10-1.17x the reviews per core it does on Node 24 (docs/performance.md, "Against SimKube"). The defaults
# name exact releases; pin them by digest for a build from a registry (NODE_IMAGE=name:tag@sha256:...,
# docs/deploying.md, "The image"). scripts/build-image.sh passes its own bases, pinned by the digest it built.
ARG NODE_IMAGE=node:26.12.1-bookworm-slim
ARG RUNTIME_IMAGE=debian:bookworm-slim

FROM ${NODE_IMAGE} AS bundle
WORKDIR /src
COPY package.json package-lock.json ./
# npm's own settings as build arguments: scripts/build-image.sh builds with no network, from a mounted npm
# cache (npm_config_offline=true). --ignore-scripts: esbuild's binary comes from its optional platform
# package; nothing else needs an install script.
ARG npm_config_offline
ARG npm_config_logs_dir
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json ./
COPY scripts/ scripts/
COPY examples/ examples/
COPY shared/ shared/
COPY knative/ knative/
COPY functions/ functions/
# scripts/bundle.mjs also writes V8's code cache by starting each function once; V8's cache bytes differ from
# run to run, so the image leaves them out (a reproducible digest; docs/deploying.md, "The image", measures what that costs).
RUN node scripts/bundle.mjs && rm -f dist/bundle/*.cache
# Node 26's Linux build also links libatomic (`ldd node`), which Debian slim does not have; the Node base does
# (the node image keeps the libraries node links). Staged from there for the runtime stage.
RUN mkdir /node-libs && cp -L "$(ldconfig -p | awk '$1 == "libatomic.so.1" { print $NF; exit }')" /node-libs/

# Small: only the node binary on Debian slim (glibc and libstdc++, which node needs, are in it; libatomic comes
# from the Node base), without npm, yarn and corepack.
FROM ${RUNTIME_IMAGE}
# OCI annotations (the image-spec's pre-defined keys). CREATED and REVISION come from the last commit that changed
# the image's inputs (scripts/build-image.sh), never from the clock, so that the same inputs give the same digest.
ARG RUNTIME_IMAGE
ARG VERSION=0.0.0-dev
ARG REVISION=unknown
ARG CREATED=1970-01-01T00:00:00Z
LABEL org.opencontainers.image.title="simkube-fn" \
      org.opencontainers.image.description="SimKube's pod admission webhook as scale-to-zero functions (mutate-create, reschedule-delete)" \
      org.opencontainers.image.licenses="MIT" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.base.name="${RUNTIME_IMAGE}"
COPY --from=bundle /usr/local/bin/node /usr/local/bin/node
# Into /usr/lib, which the loader searches after its cache: no ldconfig run, whose cache files (with the files'
# inode numbers and times) would make the layer differ from one build to the next.
COPY --from=bundle /node-libs/ /usr/lib/
COPY --from=bundle /src/dist/bundle/ /app/

# SIMKUBE_FN_COMMIT: the commit label of simkube_fn_build_info, the same revision the annotations name.
ENV NODE_ENV=production \
    PORT=8080 \
    SIMKUBE_FN_COMMIT=${REVISION}

# glibc's malloc gives threads arenas of their own, up to 8 per core; Node's threads (V8's GC and compiler
# helpers, libuv's pool) then keep freed memory in several. Two arenas: 6-8 MiB less RSS under a burst, same CPU
# per review (docs/performance.md, "glibc's malloc arenas, and other start settings on Node 26").
ENV MALLOC_ARENA_MAX=2

# Numeric non-root user: Kubernetes can only verify runAsNonRoot (set by the generated manifests) for a numeric
# USER. The files stay root-owned, so read-only to it (the manifests also mount the root read-only).
USER 1000:1000

EXPOSE 8080
# A young generation of at most 3 x 4 MiB: under a burst, Node's default let it grow to 40-100 MiB of RSS more
# for the same throughput and CPU per review (Node 26, Node 24); on both this flag costs nothing at start
# (docs/performance.md, "Against SimKube"). The benches start the functions with these same flags.
ENTRYPOINT ["node", "--max-semi-space-size=4", "/app/simkube-fn.mjs"]
CMD ["serve", "mutate-create"]
