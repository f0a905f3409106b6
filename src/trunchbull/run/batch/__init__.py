"""Batch mode (SPEC §8.8): a run\x27s model calls through the providers\x27 batch APIs."""
