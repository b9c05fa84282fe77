"""The Library's services modules (docs/architecture.md, systems)."""
