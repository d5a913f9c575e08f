# simkube-fn: one image for both functions (Knative Services run `serve mutate-create` or
# `serve reschedule-delete`; see knative/manifests.ts). OpenFaaS does not use this image: faas-cli builds
# its own from the node template and dist/openfaas/<function>/handler.js (npm run bundle:openfaas).
#
# NOT BUILT OR TESTED HERE: the development machines have no container engine. What is tested is the
# bundle folder it copies (dist/bundle/ runs on its own, without node_modules).
#
# Build (the bundle must exist first; the image copies nothing else):
#   npm ci && npm run build
#   docker build -t <registry>/simkube-fn:<tag> .
FROM node:20-slim

ENV NODE_ENV=production \
    PORT=8080

WORKDIR /app
# The bundle folder (scripts/bundle.mjs): the entry simkube-fn.mjs, functions/cli/main.ts with every dependency
# inlined (simkube-fn.cjs) and V8's code cache for it (simkube-fn.cjs.cache).
COPY dist/bundle/ /app/
# The code cache only counts for the Node that wrote it (any other Node ignores it and compiles as usual, ~60 ms
# slower to start): write it again with this image's Node by starting each function once. No cluster needed.
RUN for fn in mutate-create reschedule-delete; do \
      SIM_NAME=code-cache SIMKUBE_FN_WRITE_CODE_CACHE=1 LOG_LEVEL=error \
        node /app/simkube-fn.mjs serve "$fn" --check --port 0 || exit 1; \
    done

# Numeric non-root user (the image's "node", uid 1000): Kubernetes can only verify runAsNonRoot
# (set by the generated Knative Services) for a numeric USER.
USER 1000:1000

EXPOSE 8080
ENTRYPOINT ["node", "/app/simkube-fn.mjs"]
CMD ["serve", "mutate-create"]
