"""The Workbench (seed §4, §5.1): the job runner and the wake pipeline that brings each finished
job's result back into its lesson exactly once."""
