"""Practice's storage: problem sets (`data/practice/`)."""
