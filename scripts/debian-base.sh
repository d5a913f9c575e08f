# Sourced by scripts/build-image.sh and scripts/build-openfaas-image.sh: the Debian base both images are built on,
# pinned once, and its tag in the image store.
DEBIAN_SUITE=bookworm
# Beyond minbase: libstdc++ (node links it, debian:bookworm-slim has it) and libatomic (Node 26 links it too; the
# public node image keeps it). Part of the bases' tags, so a base built from another list is never reused.
DEBIAN_PACKAGES=libstdc++6,libatomic1
# The bases' timestamps: fixed, so one pair of bases serves every commit (they are kept in podman's store and
# built again only for new versions or a new store).
BASE_EPOCH=1735689600
# The package list in the tags: the first 8 hex of its sha256.
PACKAGES_KEY="$(printf %s "$DEBIAN_PACKAGES" | sha256sum | cut -c1-8)"
DEBIAN_BASE_TAG="localhost/simkube-fn-base/debian:$DEBIAN_SUITE-$BASE_EPOCH-$PACKAGES_KEY"
