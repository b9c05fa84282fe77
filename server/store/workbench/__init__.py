"""The Workbench's storage: job records (`data/jobs/`)."""
