# Sourced by scripts/build-image.sh and scripts/build-openfaas-image.sh.
# check_integrity FILE SRI: stops the build unless FILE's sha512 is the Subresource Integrity string SRI (the npm
# registry's dist.integrity form), naming both, so a changed or substituted download is never unpacked.
check_integrity() {
  local got
  got="sha512-$(openssl dgst -sha512 -binary "$1" | base64 -w0)"
  if [ "$got" != "$2" ]; then
    echo "[$(basename "$0" .sh)] FAILED: $(basename "$1") is $got, expected the published $2" >&2
    exit 1
  fi
}
