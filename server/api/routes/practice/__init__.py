"""Practice's routes: problem sets (`/api/practice`)."""
