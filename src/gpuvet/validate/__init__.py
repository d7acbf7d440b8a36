"""`gpuvet validate`: the three-layer baseline — inventory and software, then compute, the
module↔host links and the module↔module links — each check with a verdict, the expected value
derived from what was found, and the evidence."""
