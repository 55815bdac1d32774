"""The papers' algorithms, one module per paper, on top of the shared parts."""
