#!/bin/bash
# Slurm HealthCheckProgram (and Prolog/Epilog) for GPU nodes: runs `gpuvet health` and drains
# this node with gpuvet's reason when a check fails. gpuvet itself never drains anything.
#
#   install -m 0755 gpuvet-healthcheck.sh /usr/local/sbin/gpuvet-healthcheck.sh
#   slurm.conf: see slurm.conf.snippet next to this file.
#
# Usage: gpuvet-healthcheck.sh [healthcheck|prolog|epilog]
#   healthcheck  drain on failure and exit 0 (slurmd re-runs a failing HealthCheckProgram at
#                start-up until it exits 0, so the drain itself is the signal)
#   prolog       drain with the reason and exit 1: Slurm requeues the job, the node stays drained
#   epilog       the same after the job (leftover processes, a new Xid, a link that dropped)
# "Could not tell" (exit 2: the driver or kernel log unreadable) is logged, never drained.
#
# Site settings (environment, e.g. in /etc/default/gpuvet-healthcheck):
#   GPUVET              the gpuvet command (default: gpuvet)
#   GPUVET_HEALTH_ARGS  extra arguments, e.g. "--expect /etc/gpuvet/node.yaml --ignore power_limit"
#   SCONTROL            the scontrol command (default: scontrol)
set -u
[ -r /etc/default/gpuvet-healthcheck ] && . /etc/default/gpuvet-healthcheck
MODE="${1:-healthcheck}"
GPUVET="${GPUVET:-gpuvet}"
SCONTROL="${SCONTROL:-scontrol}"
NODE="${SLURMD_NODENAME:-$(hostname -s)}"
log() { if command -v logger >/dev/null 2>&1; then logger -t gpuvet-healthcheck; else cat >&2; fi; }

# shellcheck disable=SC2086  # GPUVET and GPUVET_HEALTH_ARGS are word lists on purpose
OUT="$($GPUVET health --format nhc --xid-since last ${GPUVET_HEALTH_ARGS:-} 2>&1)"
RC=$?
case "$RC" in
  0) exit 0 ;;
  1)
    REASON="$(printf '%s\n' "$OUT" | sed -n 's/^reason: //p' | tail -n 1)"
    printf '%s\n' "$OUT" | log
    "$SCONTROL" update nodename="$NODE" state=drain reason="${REASON:-gpuvet: health check failed}"
    [ "$MODE" = healthcheck ] && exit 0
    exit 1 ;;
  *)
    printf 'gpuvet health could not tell (exit %s): %s\n' "$RC" "$OUT" | log
    exit 0 ;;
esac
