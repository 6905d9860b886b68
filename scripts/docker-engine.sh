#!/usr/bin/env bash
# A Docker engine and the local python:3.11-slim stand-in on a machine that has neither: the recipe of
# ../shared/spec/docker-here.md (no running engine, no container registry; Debian's archive and PyPI
# reachable). Idempotent: every step already done is skipped, so CI and developers run the same thing.
# Exit 0 when `docker info` answers and the base image exists; non-zero with the reason on stderr.
# Logs (dockerd, debootstrap) go to $EVALUATION_DOCKER_STATE (default /var/tmp/evaluation-docker).
set -euo pipefail

BASE_IMAGE="python:3.11-slim"
SUITE="bookworm" # Debian 12 ships CPython 3.11, like the official image
STATE_DIR="${EVALUATION_DOCKER_STATE:-/var/tmp/evaluation-docker}"
ENGINE_WAIT_SECONDS=60

say() { echo "[docker-engine] $*"; }
fail() {
  echo "docker-engine: $*" >&2
  exit 1
}
engine_up() { timeout 10 docker info >/dev/null 2>&1; }
is_root() { [ "$(id -u)" = 0 ]; }

apt_install() {
  is_root || fail "cannot install $* without root"
  command -v apt-get >/dev/null 2>&1 || fail "cannot install $*: no apt-get on this machine"
  say "apt-get install $*"
  apt-get update -qq >/dev/null || fail "apt-get update failed"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null || fail "apt-get install $* failed"
}

mkdir -p "$STATE_DIR" 2>/dev/null || STATE_DIR="$(mktemp -d)"

# 1. The engine.
if ! engine_up; then
  missing=()
  command -v docker >/dev/null 2>&1 && command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
  command -v debootstrap >/dev/null 2>&1 || docker image inspect "$BASE_IMAGE" >/dev/null 2>&1 || missing+=(debootstrap)
  [ ${#missing[@]} = 0 ] || apt_install "${missing[@]}"
  is_root || fail "no Docker engine answers \`docker info\` and starting dockerd needs root"
  # overlay2 where the kernel mounts overlayfs on this disk (a container start under a second; the
  # recipe's vfs copies the image's layers at every start, 15 s and more), else vfs as the recipe says
  for driver in overlay2 vfs; do
    say "starting dockerd ($driver storage driver, no iptables), log: $STATE_DIR/dockerd.log"
    # its own session, so that the engine outlives this script and whatever started it (a test, CI)
    setsid nohup dockerd --iptables=false --storage-driver="$driver" >"$STATE_DIR/dockerd.log" 2>&1 </dev/null &
    for _ in $(seq "$ENGINE_WAIT_SECONDS"); do
      engine_up && break
      pgrep -x dockerd >/dev/null || break
      sleep 1
    done
    engine_up && break
    say "dockerd did not start with $driver: $(tail -n 1 "$STATE_DIR/dockerd.log")"
    pkill -x dockerd 2>/dev/null || true
    sleep 1
  done
  engine_up || fail "dockerd did not answer within $ENGINE_WAIT_SECONDS s (see $STATE_DIR/dockerd.log)"
fi
say "engine: Docker $(docker version --format '{{.Server.Version}}') ($(docker info --format '{{.Driver}}') storage)"

# 2. The base image: Debian bookworm made to look like the official python:3.11-slim to a Dockerfile.
if ! docker image inspect "$BASE_IMAGE" >/dev/null 2>&1; then
  command -v debootstrap >/dev/null 2>&1 || apt_install debootstrap
  is_root || fail "building $BASE_IMAGE with debootstrap needs root"
  rootfs="$STATE_DIR/rootfs"
  rm -rf "$rootfs"
  say "debootstrap $SUITE into $rootfs (about a minute), log: $STATE_DIR/debootstrap.log"
  debootstrap --variant=minbase --include=python3,python3-pip,python3-venv,ca-certificates \
    "$SUITE" "$rootfs" >"$STATE_DIR/debootstrap.log" 2>&1 ||
    fail "debootstrap failed: $(tail -n 1 "$STATE_DIR/debootstrap.log")"
  rm -f "$rootfs"/usr/lib/python3*/EXTERNALLY-MANAGED
  ln -sf /usr/bin/python3 "$rootfs/usr/local/bin/python"
  # the package index is reached through a certificate only this machine's bundle trusts
  cp /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/ca-certificates.crt"
  printf '[global]\ncert = /etc/ssl/certs/ca-certificates.crt\n' >"$rootfs/etc/pip.conf"
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  say "importing $BASE_IMAGE"
  tar -C "$rootfs" -c . | docker import - "$BASE_IMAGE" >/dev/null || fail "docker import of $BASE_IMAGE failed"
  rm -rf "$rootfs"
fi
say "base image $BASE_IMAGE ready ($(docker image inspect "$BASE_IMAGE" --format '{{.Id}}' | cut -c1-19))"
