#!/bin/bash
# node-problem-detector custom plugin: `gpuvet health --format npd` that fails closed.
# node-problem-detector reads a plugin's exit status as 0 OK, 1 problem, anything else Unknown,
# and an Unknown condition cordons nothing. So here every outcome but a healthy check is a
# problem with a reason: gpuvet missing or not executable (127, 126), "could not tell" (2: the
# driver or kernel log unreadable, a bad argument), a crash or a kill.
#
#   install -m 0755 gpuvet-npd.sh /usr/local/bin/gpuvet-npd.sh
#   gpuvet-health-monitor.json next to this file runs it; its arguments go to `gpuvet health`.
#
# Site settings (environment): GPUVET, the gpuvet command (default: gpuvet, else
# /usr/local/bin/gpuvet).
set -u
MAX=80  # the monitor's max_output_length
if [ -z "${GPUVET:-}" ]; then
  GPUVET=gpuvet
  if ! command -v gpuvet >/dev/null 2>&1 && [ -x /usr/local/bin/gpuvet ]; then GPUVET=/usr/local/bin/gpuvet; fi
fi
# shellcheck disable=SC2086  # GPUVET is a word list on purpose
OUT="$($GPUVET health --format npd "$@" 2>/dev/null)"
RC=$?
LINE="$(printf '%s\n' "$OUT" | grep -v '^[[:space:]]*$' | head -n 1)"
case "$RC" in
  0) printf '%s\n' "${LINE:-gpuvet: healthy}" | cut -c1-"$MAX"; exit 0 ;;
  1) printf '%s\n' "${LINE:-gpuvet: unhealthy, no reason given}" | cut -c1-"$MAX"; exit 1 ;;
  2) printf '%s\n' "${LINE:-gpuvet: could not tell, no reason given}" | cut -c1-"$MAX"; exit 1 ;;
  126|127) printf 'gpuvet: cannot run %s (exit %s)\n' "$GPUVET" "$RC" | cut -c1-"$MAX"; exit 1 ;;
  *) printf 'gpuvet: health check ended with exit %s\n' "$RC" | cut -c1-"$MAX"; exit 1 ;;
esac
