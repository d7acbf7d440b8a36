"""`gpuvet fleet`: the same vetting across many nodes — an executor (validate on one node,
producing a result envelope), a runner that fans out on Ray and gathers, and peer analysis
that finds the node slower than its peers."""
