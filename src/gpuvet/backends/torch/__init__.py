"""Measurements through PyTorch on the real GPUs: the engine, its models and collectives."""
