"""The Library's agent modules (docs/architecture.md, systems)."""
