#!/usr/bin/env bash
# Three Tome replicas of one snapshot behind HAProxy, sharing keys, rate limits and quotas
# through one Redis (docs/redis.md): the deployment of deploy/compose.yaml as plain commands,
# with Debian's redis-server and haproxy (apt-get install redis-server haproxy). Everything runs
# on this machine, each process in the background, its pid and log in RUN_DIR.
#
#   TOME_SNAPSHOT=snapshots/x.tome deploy/replicas.sh start    start Redis, the replicas, HAProxy
#   deploy/replicas.sh stop                                    stop them (Redis last, after its AOF is written)
#   deploy/replicas.sh haproxy-config                          print the HAProxy configuration start writes
#
# Settings (environment): TOME_SNAPSHOT (required for start), RUN_DIR (default deploy/run),
# PORT (HAProxy's, default 8080), REDIS_PORT (default 6379), REPLICA_PORTS (default
# "8081 8082 8083"; one replica per port). test/replicas.test.ts runs this script.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

mkdir -p "${RUN_DIR:-deploy/run}"
RUN_DIR=$(cd "${RUN_DIR:-deploy/run}" && pwd)
PORT=${PORT:-8080}
REDIS_PORT=${REDIS_PORT:-6379}
REPLICA_PORTS=${REPLICA_PORTS:-8081 8082 8083}
REDIS_URL="redis://127.0.0.1:$REDIS_PORT"
say() { echo "replicas.sh: $*" >&2; }

# Waits until a command succeeds, or gives up after 60 s naming what it waited for; at once when
# the command answers 2 (what it waits for has exited).
wait_for() {
  local what=$1 rc
  shift
  for _ in $(seq 1 600); do
    "$@" >/dev/null 2>&1 && return 0 || rc=$?
    if [ "$rc" -eq 2 ]; then
      say "$what exited (see the logs in $RUN_DIR; $0 stop stops what was started)"
      return 1
    fi
    sleep 0.1
  done
  say "gave up waiting for $what (see the logs in $RUN_DIR)"
  return 1
}

# Whether replica N says it serves: 0 yes, 1 not yet, 2 its process has exited.
replica_serving() {
  grep -q "is serving on" "$RUN_DIR/replica-$1.log" && return 0
  kill -0 "$(cat "$RUN_DIR/replica-$1.pid")" 2>/dev/null || return 2
  return 1
}

# Whether a URL answers 2xx (with Bun's fetch: curl may not be installed).
answers() {
  bun -e "process.exit((await fetch('$1').catch(() => ({ ok: false }))).ok ? 0 : 1)"
}

# HAProxy's configuration: round robin over REPLICA_PORTS, each replica checked on /healthz, on 127.0.0.1:PORT.
haproxy_config() {
  local i=0 port
  cat <<EOF
global
    maxconn 4096
defaults
    mode http
    timeout connect 2s
    timeout client 200s
    timeout server 200s
    # A request's head whole within 10 s, and a kept-alive connection closed after 10 s without one, as a replica's
    # own server does (Bun's idle timeout): left to timeout client, an idle or trickling connection held a slot of
    # maxconn for 200 s (D201).
    timeout http-request 10s
    timeout http-keep-alive 10s
    option httpchk
    option forwardfor
    # A replica that refuses the connection (killed, until its checks fail) passes the request to another.
    option redispatch 1
    retries 2
    http-check send meth GET uri /healthz ver HTTP/1.1 hdr Host localhost
    http-check expect status 200
frontend tome
    bind 127.0.0.1:$PORT
    # At most 100 connections at once from one client address (an IPv6 one by its /64, as D188 counts; D201): past it a
    # new one is closed at once, so that one client cannot take the maxconn slots (or a replica's sockets) from the others.
    stick-table type ipv6 size 100k expire 30s store conn_cur
    tcp-request connection track-sc0 src,ipmask(32,64)
    tcp-request connection reject if { sc0_conn_cur gt 100 }
    default_backend replicas
backend replicas
    balance roundrobin
EOF
  for port in $REPLICA_PORTS; do
    i=$((i + 1))
    echo "    server replica$i 127.0.0.1:$port check inter 1s"
  done
}

start() {
  : "${TOME_SNAPSHOT:?set TOME_SNAPSHOT to the snapshot the replicas serve}"
  for tool in redis-server redis-cli haproxy bun; do
    command -v "$tool" >/dev/null || { say "$tool is missing (Debian: apt-get install redis-server haproxy; bun: npm install -g bun)"; exit 1; }
  done
  # A second start would find the ports taken and write its pids over those of the running processes, which stop
  # would then leave running.
  local file
  for file in "$RUN_DIR"/*.pid; do
    if [ -f "$file" ] && kill -0 "$(cat "$file")" 2>/dev/null; then
      say "already running in $RUN_DIR (process $(cat "$file"), $(basename "$file")): stop it first with $0 stop"
      exit 1
    fi
  done
  mkdir -p "$RUN_DIR/redis"

  # 1. Redis, with the persistence Tome needs: the AOF, fsynced every second.
  redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --dir "$RUN_DIR/redis" \
    --appendonly yes --appendfsync everysec --save "" \
    --daemonize yes --pidfile "$RUN_DIR/redis.pid" --logfile "$RUN_DIR/redis.log"
  wait_for "Redis on port $REDIS_PORT" redis-cli -p "$REDIS_PORT" ping

  # 2. The replicas: the same snapshot, the same Redis, each on its own port.
  local i=0 port
  for port in $REPLICA_PORTS; do
    i=$((i + 1))
    # HAProxy reaches them from 127.0.0.1 and names the client in X-Forwarded-For (D80).
    HOST=127.0.0.1 PORT=$port TOME_SNAPSHOT=$TOME_SNAPSHOT TOME_REDIS_URL=$REDIS_URL TOME_TRUSTED_PROXIES=127.0.0.1 \
      nohup bun src/cli/start.ts >"$RUN_DIR/replica-$i.log" 2>&1 &
    echo $! >"$RUN_DIR/replica-$i.pid"
  done
  i=0
  for port in $REPLICA_PORTS; do
    i=$((i + 1))
    wait_for "replica $i on port $port" replica_serving "$i" || {
      tail -n 3 "$RUN_DIR/replica-$i.log" >&2
      exit 1
    }
  done

  # 3. HAProxy in front.
  haproxy_config >"$RUN_DIR/haproxy.cfg"
  haproxy -c -q -f "$RUN_DIR/haproxy.cfg"
  haproxy -D -f "$RUN_DIR/haproxy.cfg" -p "$RUN_DIR/haproxy.pid"
  wait_for "HAProxy on port $PORT" answers "http://127.0.0.1:$PORT/healthz"

  say "serving on http://127.0.0.1:$PORT ($i replicas, Redis at $REDIS_URL; logs and pids in $RUN_DIR)."
  say "make a key with: TOME_REDIS_URL=$REDIS_URL bun run keys create --name NAME"
}

# Stops the process whose pid is in a file (SIGTERM, then waits for it), if it runs.
stop_pid() {
  local file=$1 pid
  [ -f "$file" ] || return 0
  pid=$(cat "$file")
  if kill "$pid" 2>/dev/null; then
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
  rm -f "$file"
}

stop() {
  stop_pid "$RUN_DIR/haproxy.pid"
  local file
  for file in "$RUN_DIR"/replica-*.pid; do stop_pid "$file"; done
  # SHUTDOWN writes the AOF out before Redis exits.
  if [ -f "$RUN_DIR/redis.pid" ]; then
    redis-cli -p "$REDIS_PORT" shutdown >/dev/null 2>&1 || true
    stop_pid "$RUN_DIR/redis.pid"
  fi
  say "stopped."
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  haproxy-config) haproxy_config ;;
  *) echo "Usage: TOME_SNAPSHOT=FILE $0 start | $0 stop | $0 haproxy-config   (settings: see the comment at the top)" >&2; exit 2 ;;
esac
