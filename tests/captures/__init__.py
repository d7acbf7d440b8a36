"""Tests of captured files: every format gpuvet reads from a file, and the blind batches."""
