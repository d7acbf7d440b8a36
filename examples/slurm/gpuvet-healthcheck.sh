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
#   prolog       drain with the reason and exit 1: Slurm drains the node too, and requeues the
#                job (held, unless SchedulerParameters has nohold_on_prolog_fail)
#   epilog       the same after the job (leftover processes, a new Xid, a link that dropped);
#                exit 1: Slurm drains the node too (it requeues nothing after a job)
#
# Fails closed: a node is never passed on what gpuvet could not see.
#   - gpuvet missing from slurmd's PATH (exit 127), not executable (126), crashed, killed, or
#     "could not tell" (exit 2: the driver or kernel log unreadable, a bad site argument):
#     the node is drained with that reason, as for a failed check.
#   - An Xid counts as seen only after the drain is confirmed: gpuvet's mark of the last Xid
#     read moves in this run's own copy ($GPUVET_STATE.pending.XXXXXX; overlapping runs never
#     share one), and the copy replaces the mark (under flock) only when
#     scontrol succeeded (or the node was healthy). When scontrol fails (the controller is
#     down), the mark stays, the script exits 1, and the next run reports the same Xid again.
#
# Site settings (environment, e.g. in /etc/default/gpuvet-healthcheck):
#   GPUVET              the gpuvet command (default: gpuvet, else /usr/local/bin/gpuvet)
#   GPUVET_HEALTH_ARGS  extra arguments, e.g. "--expect /etc/gpuvet/node.yaml --ignore power_limit"
#                       (not --state: the script keeps the mark in GPUVET_STATE)
#   GPUVET_STATE        the Xid mark (default: /var/lib/gpuvet/health-xid-mark.json)
#   SCONTROL            the scontrol command (default: scontrol)
set -u
DEFAULTS="${GPUVET_HEALTHCHECK_DEFAULTS:-/etc/default/gpuvet-healthcheck}"
# shellcheck source=/dev/null  # the site's own settings file
[ -r "$DEFAULTS" ] && . "$DEFAULTS"
MODE="${1:-healthcheck}"
SCONTROL="${SCONTROL:-scontrol}"
STATE="${GPUVET_STATE:-/var/lib/gpuvet/health-xid-mark.json}"
NODE="${SLURMD_NODENAME:-$(hostname -s)}"
log() { if command -v logger >/dev/null 2>&1; then logger -t gpuvet-healthcheck; else cat >&2; fi; }

case "$MODE" in
  healthcheck|prolog|epilog) ;;
  *) printf 'gpuvet-healthcheck.sh: unknown mode %s (use healthcheck, prolog or epilog)\n' "$MODE" >&2; exit 2 ;;
esac

# slurmd runs this with a minimal PATH: look where pip and distributions install gpuvet too
if [ -z "${GPUVET:-}" ]; then
  GPUVET=gpuvet
  if ! command -v gpuvet >/dev/null 2>&1 && [ -x /usr/local/bin/gpuvet ]; then GPUVET=/usr/local/bin/gpuvet; fi
fi

# drain REASON: true only when scontrol confirmed it
drain() {
  local reason
  # printable ASCII without what a quoted shell word expands (" $ ` \), as gpuvet's own reason
  reason="$(printf '%s' "$1" | tr -c '[:print:]' ' ' | tr -d '\042\044\140\134' | cut -c1-120)"
  "$SCONTROL" update nodename="$NODE" state=drain reason="$reason"
}

# the mark moves only in this run's own copy (HealthCheckProgram, Prolog and Epilog may overlap: a
# shared copy let a healthy run commit another run's mark before that run's drain went through);
# commit_mark makes it the mark, under a lock (a mark moved back by an older run only reports an Xid again)
mkdir -p "$(dirname "$STATE")" 2>/dev/null
PENDING="$(mktemp "$STATE.pending.XXXXXX" 2>/dev/null)" || PENDING="$STATE.pending.$$"
rm -f "$PENDING"
[ -f "$STATE" ] && cp -p "$STATE" "$PENDING"
trap 'rm -f "$PENDING"' EXIT
commit_mark() {
  [ -f "$PENDING" ] || return 0
  if command -v flock >/dev/null 2>&1; then
    ( flock -w 10 9 && mv -f "$PENDING" "$STATE" ) 9>"$STATE.lock"
  else
    mv -f "$PENDING" "$STATE"
  fi
}

# shellcheck disable=SC2086  # GPUVET and GPUVET_HEALTH_ARGS are word lists on purpose
OUT="$($GPUVET health --format nhc --xid-since last --state "$PENDING" ${GPUVET_HEALTH_ARGS:-} 2>&1)"
RC=$?
if [ "$RC" -eq 0 ]; then
  commit_mark
  exit 0
fi

REASON="$(printf '%s\n' "$OUT" | sed -n 's/^reason: //p' | tail -n 1)"
# the first line that says something: not a usage banner or an error box's frame (a mistyped site
# argument prints "Usage: ..." first and its message inside a box)
FIRST="$(printf '%s\n' "$OUT" | sed 's/[│╭╮╰╯─]//g; s/^[[:space:]]*//' \
  | grep -v -e '^$' -e '^Usage:' -e '^Try ' -e '^Error[[:space:]]*$' | head -n 1)"
case "$RC" in
  1) REASON="${REASON:-gpuvet: health check failed without a reason: ${FIRST:-no output}}" ;;
  2) REASON="${REASON:-gpuvet: could not tell: ${FIRST:-no output}}" ;;
  126|127) REASON="gpuvet: cannot run '$GPUVET' (exit $RC): set GPUVET in $DEFAULTS" ;;
  *) REASON="gpuvet: health check ended with exit $RC: ${FIRST:-no output}" ;;
esac
printf 'gpuvet health exit %s: %s\n' "$RC" "$OUT" | log

if drain "$REASON"; then
  commit_mark
  [ "$MODE" = healthcheck ] && exit 0
  exit 1
fi
rm -f "$PENDING"
printf 'scontrol could not drain %s (%s); the fault stays unseen and is reported again next run\n' \
  "$NODE" "$REASON" | log
exit 1
