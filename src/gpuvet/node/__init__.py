"""What a node is: spec format, presets, catalog, link graph, flows. Pure, no I/O but
reading the package's own preset files; imports nothing else of gpuvet but `errors`."""
