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
exec bash "$(dirname "$0")/install-missing.sh" install-launcher-deps "${missing[@]}"
