"""Learning Harness server: a FastAPI sidecar on loopback (seed §8, machine room)."""

__version__ = "0.1.0"
