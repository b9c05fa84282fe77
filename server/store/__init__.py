"""STORE: file-system adapters implementing the core ports; the only code touching the data dir."""
