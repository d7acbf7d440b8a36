"""Benchmarks: each defined once (what to run, what the number means), timed by one module
(``timing``), run by whichever engine the backend provides."""
