#!/bin/sh
# Slurm Epilog: the health check after each job (slurm.conf: Epilog=/usr/local/sbin/gpuvet-epilog.sh).
exec /usr/local/sbin/gpuvet-healthcheck.sh epilog
