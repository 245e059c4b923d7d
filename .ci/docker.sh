#!/usr/bin/env bash
# Make a Docker engine answer, for the container sandbox's tests (tests/container/).
#
# Idempotent, and safe to run or to source: installs docker.io only when dockerd is
# missing, starts dockerd in the background only when `docker info` fails, waits up to
# 60 s for it, and prints the engine version. CI runs as root on a fresh clone; nothing
# is pulled (benchtape builds its own base image from the host, see sandbox/baseimage.py).
# Our containers use `network: none`, so when the default start fails (no iptables in a
# nested sandbox, say) it retries once without the bridge network.

benchtape_docker_up() (
  set -u
  log=${DOCKERD_LOG:-/tmp/dockerd.log}
  say() { echo "ci/docker: $*"; }
  as_root() { if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo -n "$@"; else "$@"; fi; }

  engine_up() { docker info >/dev/null 2>&1; }

  wait_for_engine() {  # $1: pid of the dockerd we started
    for _ in $(seq 1 60); do
      engine_up && return 0
      kill -0 "$1" 2>/dev/null || return 1
      sleep 1
    done
    return 1
  }

  start_dockerd() {
    # A dockerd that crashed can leave its pid file behind and refuse to start again.
    if [ -f /var/run/docker.pid ] && ! kill -0 "$(cat /var/run/docker.pid 2>/dev/null)" 2>/dev/null; then
      as_root rm -f /var/run/docker.pid
    fi
    as_root setsid dockerd "$@" >>"$log" 2>&1 < /dev/null &
    echo $!
  }

  if ! command -v dockerd >/dev/null 2>&1 || ! command -v docker >/dev/null 2>&1; then
    say "installing docker.io (dockerd or docker missing)"
    export DEBIAN_FRONTEND=noninteractive
    as_root apt-get update -qq >/dev/null && as_root apt-get install -y -qq docker.io >/dev/null \
      || { say "apt-get install docker.io failed"; return 1; }
  fi

  if engine_up; then
    say "engine already running"
  else
    say "starting dockerd (log: $log)"
    pid=$(start_dockerd)
    if ! wait_for_engine "$pid"; then
      if kill -0 "$pid" 2>/dev/null; then
        say "dockerd did not answer within 60 s; last log lines:"; tail -n 20 "$log"; return 1
      fi
      say "dockerd exited; retrying without the bridge network (--bridge=none --iptables=false)"
      pid=$(start_dockerd --bridge=none --iptables=false --ip6tables=false)
      wait_for_engine "$pid" || { say "dockerd failed to start; last log lines:"; tail -n 20 "$log"; return 1; }
    fi
  fi
  say "engine $(docker version --format '{{.Server.Version}}' 2>/dev/null) ready"
)

benchtape_docker_up
_benchtape_docker_rc=$?
# `return` when sourced, `exit` when run.
return "$_benchtape_docker_rc" 2>/dev/null || exit "$_benchtape_docker_rc"
