"""gpuvet's tests. An xdist worker reads the modules its controller compiled for it (support/bytecode.py)."""

import os

if os.environ.get("GPUVET_TEST_PYCACHE"):  # set by the controller only where bytecode may not be written
    from tests.support.bytecode import read_from

    read_from(os.environ["GPUVET_TEST_PYCACHE"])
