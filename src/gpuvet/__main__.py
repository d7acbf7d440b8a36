"""`python -m gpuvet` runs the same CLI as the `gpuvet` script."""

import sys

from gpuvet.cli.app import main

sys.exit(main())
