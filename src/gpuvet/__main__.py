"""`python -m gpuvet` runs the same CLI as the `gpuvet` script."""

from gpuvet.cli.app import run

run()
