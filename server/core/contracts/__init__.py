"""Pydantic contracts, one module per domain (seed §2.2)."""
