#!/usr/bin/env bash
# Installs what the launchers tier (npm run test:launchers) needs, from Debian's packages: Open
# MPI's mpirun (openmpi-bin), MPICH's mpiexec (mpich), and Slurm for one node with munge
# (slurmctld, slurmd, slurm-client, munge; scripts/slurm-one-node.sh starts and stops it). Root
# only; installs only what is missing; never starts a daemon (Debian's policy keeps them stopped).
set -euo pipefail
missing=()
command -v mpirun.openmpi >/dev/null 2>&1 || missing+=(openmpi-bin)
command -v mpiexec.hydra >/dev/null 2>&1 || command -v mpiexec.mpich >/dev/null 2>&1 || missing+=(mpich)
command -v slurmctld >/dev/null 2>&1 || missing+=(slurmctld)
command -v slurmd >/dev/null 2>&1 || missing+=(slurmd)
command -v srun >/dev/null 2>&1 || missing+=(slurm-client)
command -v munged >/dev/null 2>&1 || missing+=(munge)
if [ ${#missing[@]} -eq 0 ]; then echo "install-launcher-deps: mpirun, mpiexec, Slurm and munge are there"; exit 0; fi
if [ "$(id -u)" -ne 0 ]; then echo "install-launcher-deps: not root: cannot install ${missing[*]} (the launchers tier will skip them)"; exit 0; fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "install-launcher-deps: installed ${missing[*]}"
