"""The Classroom's services modules (docs/architecture.md, systems)."""
