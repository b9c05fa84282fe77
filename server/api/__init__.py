"""SHELL: FastAPI routers (transport only) and the built frontend."""
