#!/usr/bin/env bash
# Installs what the network-namespace tier (npm run test:netns) needs, from Debian's packages:
# ip and tc (iproute2) and nft (nftables). Root only; does nothing where they are there already.
set -euo pipefail
missing=()
command -v ip >/dev/null 2>&1 && command -v tc >/dev/null 2>&1 || missing+=(iproute2)
command -v nft >/dev/null 2>&1 || missing+=(nftables)
exec bash "$(dirname "$0")/install-missing.sh" install-netns-deps "${missing[@]}"
