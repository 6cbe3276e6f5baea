#!/usr/bin/env bash
# Installs what the network-namespace tier (npm run test:netns) needs, from Debian's packages:
# ip and tc (iproute2) and nft (nftables). Root only; does nothing where they are there already.
set -euo pipefail
missing=()
command -v ip >/dev/null 2>&1 && command -v tc >/dev/null 2>&1 || missing+=(iproute2)
command -v nft >/dev/null 2>&1 || missing+=(nftables)
if [ ${#missing[@]} -eq 0 ]; then echo "install-netns-deps: ip, tc and nft are there"; exit 0; fi
if [ "$(id -u)" -ne 0 ]; then echo "install-netns-deps: not root: cannot install ${missing[*]} (the netns tier will skip)"; exit 0; fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "install-netns-deps: installed ${missing[*]}"
