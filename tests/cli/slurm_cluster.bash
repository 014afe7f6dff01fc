# slurm_cluster.bash - a one-node Slurm cluster for a test (sourced, not a test itself):
# Debian's slurm-wlm and munge, installed when missing; munged as the munge user with a
# fresh 0400 key and its own socket in /run/munge; slurmctld and slurmd started directly
# from a generated slurm.conf (one node at 127.0.0.1 with this machine's CPUs,
# proctrack/linuxproc, select/cons_tres, free ports), all their state in one folder.
# slurm_cluster_stop ends every daemon by its PID and removes the folder and the socket.
#
#   slurm_cluster_install || { echo "SKIPPED: $SLURM_CLUSTER_WHY"; exit 77; }
#   slurm_cluster_start STATE_DIR || fail ...   # exports SLURM_CONF for sbatch, squeue
#   slurm_cluster_wait_jobs SECONDS ID...       # until none of the jobs is queued or running
#   slurm_cluster_stop

SLURM_CLUSTER_WHY=""
SLURM_CLUSTER_DIR=""
SLURM_CLUSTER_SOCKET=""

# The packages, when a daemon or client is missing: 0, or 1 with SLURM_CLUSTER_WHY set.
slurm_cluster_install() {
  local have=1 c
  for c in slurmctld slurmd sbatch squeue munged munge; do
    command -v "$c" >/dev/null 2>&1 || PATH=$PATH:/usr/sbin command -v "$c" >/dev/null 2>&1 || have=0
  done
  export PATH=$PATH:/usr/sbin
  [ "$have" = 1 ] && return 0
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    SLURM_CLUSTER_WHY="slurm-wlm and munge are not installed, and installing them needs root and apt-get"
    return 1
  fi
  local apt=(apt-get -o DPkg::Lock::Timeout=300 install -y --no-install-recommends slurm-wlm munge)
  if ! DEBIAN_FRONTEND=noninteractive "${apt[@]}" >/tmp/tkb_slurm_apt.$$ 2>&1; then
    apt-get -o DPkg::Lock::Timeout=300 update >>/tmp/tkb_slurm_apt.$$ 2>&1
    if ! DEBIAN_FRONTEND=noninteractive "${apt[@]}" >>/tmp/tkb_slurm_apt.$$ 2>&1; then
      SLURM_CLUSTER_WHY="installing slurm-wlm and munge failed: $(tail -n 2 /tmp/tkb_slurm_apt.$$ | tr '\n' ' ')"
      rm -f /tmp/tkb_slurm_apt.$$
      return 1
    fi
  fi
  rm -f /tmp/tkb_slurm_apt.$$
  return 0
}

# Free TCP ports, from the kernel (bound, read and closed at once).
_slurm_free_ports() {
  python3 -c '
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))'
}

# Waits up to $1 seconds for the command after it to succeed.
_slurm_until() {
  local t=$1
  shift
  while ! "$@" >/dev/null 2>&1; do
    t=$((t - 1))
    [ "$t" -ge 0 ] || return 1
    sleep 1
  done
}

slurm_cluster_start() {
  local dir=$1
  SLURM_CLUSTER_DIR=$dir
  rm -rf "$dir"
  mkdir -p "$dir/munge" "$dir/ctld" "$dir/d" || return 1
  # munged refuses keys and folders others may read or write
  chown munge:munge "$dir/munge" && chmod 0700 "$dir/munge" || return 1
  dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
  chown munge:munge "$dir/munge/munge.key" && chmod 0400 "$dir/munge/munge.key"
  mkdir -p /run/munge && chown munge:munge /run/munge && chmod 0755 /run/munge
  SLURM_CLUSTER_SOCKET=/run/munge/tkb-test-$$.socket
  runuser -u munge -- munged --key-file="$dir/munge/munge.key" --socket="$SLURM_CLUSTER_SOCKET" \
    --pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" \
    --seed-file="$dir/munge/munged.seed" || { echo "munged did not start: $(cat "$dir/munge/munged.log" 2>/dev/null)"; return 1; }

  local ports host cpus
  ports=($(_slurm_free_ports))
  host=$(hostname -s)
  cpus=$(nproc)
  cat >"$dir/slurm.conf" <<EOF
ClusterName=tkbtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=${ports[0]}
SlurmdPort=${ports[1]}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$SLURM_CLUSTER_SOCKET
CredType=cred/munge
StateSaveLocation=$dir/ctld
SlurmdSpoolDir=$dir/d
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
MpiDefault=none
ReturnToService=2
NodeName=tkbnode NodeHostname=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=tkb Nodes=tkbnode Default=YES MaxTime=INFINITE State=UP
EOF
  export SLURM_CONF=$dir/slurm.conf
  slurmctld -f "$SLURM_CONF" || { echo "slurmctld did not start: $(tail -n 5 "$dir/slurmctld.log" 2>/dev/null)"; return 1; }
  slurmd -f "$SLURM_CONF" -N tkbnode || { echo "slurmd did not start: $(tail -n 5 "$dir/slurmd.log" 2>/dev/null)"; return 1; }
  # the node is ready once the controller has it idle
  if ! _slurm_until 60 bash -c '[ "$(sinfo -h -n tkbnode -o %t)" = idle ]'; then
    echo "the node did not come up: $(sinfo 2>&1) $(tail -n 5 "$dir/slurmctld.log" "$dir/slurmd.log")"
    return 1
  fi
}

# slurm_cluster_wait_jobs SECONDS ID...: 0 once no job of the IDs is pending or running.
slurm_cluster_wait_jobs() {
  local t=$1
  shift
  local ids
  ids=$(IFS=,; echo "$*")
  _slurm_until "$t" bash -c "[ -z \"\$(squeue -h -j $ids -o %i 2>/dev/null)\" ]"
}

# Ends a daemon by the PID its file holds, and waits for it to be gone.
_slurm_kill() {
  local pid
  pid=$(cat "$1" 2>/dev/null) || return 0
  [ -n "$pid" ] || return 0
  kill "$pid" 2>/dev/null || return 0
  _slurm_until 20 bash -c "! kill -0 $pid" || kill -9 "$pid" 2>/dev/null
}

slurm_cluster_stop() {
  [ -n "$SLURM_CLUSTER_DIR" ] || return 0
  # jobs still going (a test cut short) end with the cluster, not after it
  if [ -f "$SLURM_CLUSTER_DIR/slurmctld.pid" ]; then
    scancel --user="$(id -un)" 2>/dev/null
    _slurm_until 20 bash -c '[ -z "$(squeue -h -o %i 2>/dev/null)" ]'
  fi
  _slurm_kill "$SLURM_CLUSTER_DIR/slurmd.pid"
  _slurm_kill "$SLURM_CLUSTER_DIR/slurmctld.pid"
  _slurm_kill "$SLURM_CLUSTER_DIR/munge/munged.pid"
  rm -rf "$SLURM_CLUSTER_DIR"
  rm -f "$SLURM_CLUSTER_SOCKET" "$SLURM_CLUSTER_SOCKET.lock"
  SLURM_CLUSTER_DIR=""
}
