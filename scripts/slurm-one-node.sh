#!/usr/bin/env bash
# A one-node Slurm for the launchers tier: `slurm-one-node.sh start DIR` configures slurmctld and
# slurmd for this host in DIR (created; state, spool, logs, pid files all there), starts munge
# (as its user) if it is not running, then both daemons, and waits until the node is idle; it
# prints the SLURM_CONF to use. `slurm-one-node.sh stop DIR` stops what start started and removes
# DIR. Root only (slurmd runs the job's processes as their user). Uses no cgroups (proctrack
# linuxproc, task/none), so it starts in a VM or container without a cgroup setup.
set -euo pipefail
cmd=${1:-}; dir=${2:-}
if [ -z "$cmd" ] || [ -z "$dir" ]; then echo "usage: $0 start|stop DIR" >&2; exit 2; fi

stop () {
  pids=()
  for d in slurmd slurmctld; do [ -f "$dir/$d.pid" ] && pids+=("$(cat "$dir/$d.pid")"); done
  if [ -f "$dir/munged.started" ] && [ -f /run/munge/munged.pid ]; then pids+=("$(cat /run/munge/munged.pid)"); fi
  [ ${#pids[@]} -gt 0 ] && kill "${pids[@]}" 2>/dev/null || true
  # (until they and the step daemons of the jobs they ran are gone, at most 10 s)
  for _ in $(seq 100); do
    alive=0
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    pgrep -x slurmstepd >/dev/null 2>&1 && alive=1
    [ $alive -eq 0 ] && break
    sleep 0.1
  done
  # (what is still there after that — a step daemon of a job ended by a signal — is killed: no
  # other Slurm runs on a host where this one was started, since it starts only where none answers)
  [ ${#pids[@]} -gt 0 ] && kill -9 "${pids[@]}" 2>/dev/null || true
  pkill -9 -x slurmstepd 2>/dev/null || true
  rm -rf "$dir"
}

case "$cmd" in
  stop) stop; exit 0 ;;
  start) ;;
  *) echo "usage: $0 start|stop DIR" >&2; exit 2 ;;
esac

[ "$(id -u)" -eq 0 ] || { echo "slurm-one-node: not root" >&2; exit 1; }
for t in slurmctld slurmd srun sinfo munged; do command -v $t >/dev/null 2>&1 || { echo "slurm-one-node: no $t (bash scripts/install-launcher-deps.sh)" >&2; exit 1; }; done
mkdir -p "$dir/state" "$dir/spool"
trap 'stop; exit 1' ERR

# munge: one per host; started here only if none runs
if ! munge -n </dev/null >/dev/null 2>&1; then
  mkdir -p /run/munge /var/log/munge /var/lib/munge
  chown munge:munge /run/munge /var/log/munge /var/lib/munge
  [ -f /etc/munge/munge.key ] || { dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key 2>/dev/null; chown munge:munge /etc/munge/munge.key; chmod 400 /etc/munge/munge.key; }
  runuser -u munge -- /usr/sbin/munged
  touch "$dir/munged.started"
  for _ in $(seq 50); do munge -n </dev/null >/dev/null 2>&1 && break; sleep 0.1; done
fi

# two free ports for the daemons
ports=$(node -e "const n=require('net');const a=[];let k=0;for(let i=0;i<2;i++){const s=n.createServer();s.listen(0,'127.0.0.1',()=>{a.push(s.address().port);s.close();if(++k===2)console.log(a.join(' '))})}")
set -- $ports
host=$(hostname)
cat > "$dir/slurm.conf" <<CONF
ClusterName=amlapi
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$1
SlurmdPort=$2
SlurmUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=amlapi Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
export SLURM_CONF="$dir/slurm.conf"
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
for _ in $(seq 100); do
  sinfo -h -o %t 2>/dev/null | grep -qE 'idle|mix' && { echo "SLURM_CONF=$SLURM_CONF"; exit 0; }
  sleep 0.1
done
echo "slurm-one-node: the node did not come up; logs in $dir" >&2
cat "$dir/slurmctld.log" "$dir/slurmd.log" >&2 2>/dev/null || true
exit 1
