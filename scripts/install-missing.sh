#!/usr/bin/env bash
# Installs Debian packages for a test tier: `install-missing.sh TIER PACKAGE…` (the packages its
# caller found missing; none: says all is there). Root only: otherwise it says what the tier will
# skip and succeeds. Never starts a daemon (Debian's policy keeps them stopped).
set -euo pipefail
tier=$1; shift
if [ $# -eq 0 ]; then echo "$tier: everything is there"; exit 0; fi
if [ "$(id -u)" -ne 0 ]; then echo "$tier: not root: cannot install $* (the tier will skip what needs them)"; exit 0; fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "$@"
echo "$tier: installed $*"
