"""`gpuvet plan`: memory per module, collective times, step time and communication share on a
topology, power caps under a budget — arithmetic from the node model, every assumption shown."""
