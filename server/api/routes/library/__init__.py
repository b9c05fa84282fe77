"""The Library's routes: sources and imports (`/api/library`), the graph (`/api/graph`)."""
