"""The Classroom's core modules (docs/architecture.md, systems)."""
