"""The Workbench's routes: jobs (`/api/jobs`)."""
