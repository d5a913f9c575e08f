# simkube-fn: one image for both functions (Knative Services run `serve mutate-create` or
# `serve reschedule-delete`; see knative/manifests.ts). OpenFaaS does not use this image: faas-cli builds
# its own from the node template and dist/openfaas/<function>/handler.js (npm run bundle:openfaas).
#
# NOT BUILT OR TESTED HERE: the development machines have no container engine. What is tested is the
# bundle it copies (dist/bundle/simkube-fn.mjs runs on its own, without node_modules).
#
# Build (the bundle must exist first; the image copies nothing else):
#   npm ci && npm run build
#   docker build -t <registry>/simkube-fn:<tag> .
FROM node:20-slim

ENV NODE_ENV=production \
    PORT=8080

WORKDIR /app
# The single-file ESM bundle of functions/cli.ts with every dependency inlined.
COPY dist/bundle/simkube-fn.mjs /app/simkube-fn.mjs

# Numeric non-root user (the image's "node", uid 1000): Kubernetes can only verify runAsNonRoot
# (set by the generated Knative Services) for a numeric USER.
USER 1000:1000

EXPOSE 8080
ENTRYPOINT ["node", "/app/simkube-fn.mjs"]
CMD ["serve", "mutate-create"]
