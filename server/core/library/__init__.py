"""The Library's core modules (docs/architecture.md, systems)."""
