"""Evaluation harnesses: the fault matrices gpuvet is judged by and the fit of its collective model
to published figures. Tests and benchmarks both use them, the installed package never does (issue
45; tests/test_architecture.py keeps src/ from importing them). Benchmarks run from the repository
root put it on sys.path first (``python benchmarks/doctor_matrix.py``)."""
