#!/bin/sh
# Slurm Prolog: the health check before each job (slurm.conf: Prolog=/usr/local/sbin/gpuvet-prolog.sh).
exec /usr/local/sbin/gpuvet-healthcheck.sh prolog
