# pg_server.bash - a PostgreSQL server of its own for a test (sourced, not a test itself):
# Debian's postgresql, installed when missing; a fresh cluster (initdb, trust
# authentication) in a folder owned by the postgres user, started directly with `postgres`
# on a Unix socket in that folder only (listen_addresses = ''), so tests running at once
# never meet; pg_server_stop ends it by the PID its postmaster.pid holds and removes the
# folder.
#
#   pg_server_install || { echo "SKIPPED: $PG_SERVER_WHY"; exit 77; }
#   pg_server_start DIR || fail ...   # sets PG_SERVER_SOCKET; database "tkb" made
#   pg_server_psql SQL                # as the postgres user, on database tkb
#   pg_server_stop

PG_SERVER_WHY=""
PG_SERVER_DIR=""
PG_SERVER_SOCKET=""
PG_SERVER_BIN=""

_pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }

# The package, when its server is missing: 0, or 1 with PG_SERVER_WHY set.
pg_server_install() {
  PG_SERVER_BIN=$(_pg_bin)
  if [ -z "$PG_SERVER_BIN" ] || [ ! -x "$PG_SERVER_BIN/initdb" ]; then
    if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
      PG_SERVER_WHY="postgresql is not installed, and installing it needs root and apt-get"
      return 1
    fi
    local apt=(apt-get -o DPkg::Lock::Timeout=300 install -y --no-install-recommends postgresql)
    if ! DEBIAN_FRONTEND=noninteractive "${apt[@]}" >/tmp/tkb_pg_apt.$$ 2>&1; then
      apt-get -o DPkg::Lock::Timeout=300 update >>/tmp/tkb_pg_apt.$$ 2>&1
      if ! DEBIAN_FRONTEND=noninteractive "${apt[@]}" >>/tmp/tkb_pg_apt.$$ 2>&1; then
        PG_SERVER_WHY="installing postgresql failed: $(tail -n 2 /tmp/tkb_pg_apt.$$ | tr '\n' ' ')"
        rm -f /tmp/tkb_pg_apt.$$
        return 1
      fi
    fi
    rm -f /tmp/tkb_pg_apt.$$
    PG_SERVER_BIN=$(_pg_bin)
  fi
  if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
    PG_SERVER_WHY="the postgresql package left no postgres user to run the server as"
    return 1
  fi
  return 0
}

# Runs a command as the server's user (root may not run PostgreSQL; anyone else is it).
_pg_as() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

pg_server_psql() {
  _pg_as "$PG_SERVER_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$PG_SERVER_SOCKET" -U postgres -d tkb -c "$1"
}

# Starts the server with its data and socket in DIR (made; a folder the postgres user can
# reach); 0 when it accepts connections and database tkb exists.
pg_server_start() {
  PG_SERVER_DIR=$1
  PG_SERVER_SOCKET=$PG_SERVER_DIR/sock
  mkdir -p "$PG_SERVER_SOCKET" || return 1
  [ "$(id -u)" = 0 ] && chown -R postgres: "$PG_SERVER_DIR"
  _pg_as "$PG_SERVER_BIN/initdb" -D "$PG_SERVER_DIR/data" -A trust -U postgres -E UTF8 --no-sync \
    >"$PG_SERVER_DIR/initdb.log" 2>&1 || { cat "$PG_SERVER_DIR/initdb.log"; return 1; }
  # fsync off: a test's data need not survive a power cut
  _pg_as "$PG_SERVER_BIN/postgres" -D "$PG_SERVER_DIR/data" -k "$PG_SERVER_SOCKET" \
    -c listen_addresses= -c fsync=off -c max_connections=40 >"$PG_SERVER_DIR/server.log" 2>&1 &
  local t=120
  until _pg_as "$PG_SERVER_BIN/pg_isready" -q -h "$PG_SERVER_SOCKET" -U postgres; do
    t=$((t - 1))
    if [ "$t" -lt 0 ]; then cat "$PG_SERVER_DIR/server.log"; return 1; fi
    sleep 0.5
  done
  _pg_as "$PG_SERVER_BIN/createdb" -h "$PG_SERVER_SOCKET" -U postgres tkb
}

# Stops the server by its PID (fast shutdown, then a kill after 30 s) and removes DIR.
pg_server_stop() {
  [ -n "$PG_SERVER_DIR" ] || return 0
  local pid
  pid=$(head -n 1 "$PG_SERVER_DIR/data/postmaster.pid" 2>/dev/null)
  if [ -n "$pid" ]; then
    kill -INT "$pid" 2>/dev/null
    local t=60
    while kill -0 "$pid" 2>/dev/null && [ "$t" -gt 0 ]; do sleep 0.5; t=$((t - 1)); done
    kill -KILL "$pid" 2>/dev/null
  fi
  rm -rf "$PG_SERVER_DIR"
  PG_SERVER_DIR=""
}
