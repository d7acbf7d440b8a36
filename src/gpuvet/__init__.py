"""gpuvet: vet, benchmark, watch and plan GPU compute modules."""

__version__ = "0.1.0"
