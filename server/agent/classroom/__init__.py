"""The Classroom's agent modules (docs/architecture.md, systems)."""
