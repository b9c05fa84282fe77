"""Hatch build hook: installing the package builds the frontend into server/static/.

Runs `npm ci` (when node_modules is missing) and `npm run build` in frontend/. Skipped when the
build is newer than every frontend source, or when LH_SKIP_FRONTEND_BUILD=1 (for server-only
development). Fails the install with a clear message when npm is missing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

SOURCES = ("src", "index.html", "package.json", "package-lock.json", "vite.config.ts", "tsconfig.json")


def _newest(paths: list[Path]) -> float:
    newest = 0.0
    for path in paths:
        if path.is_dir():
            for child in path.rglob("*"):
                if child.is_file():
                    newest = max(newest, child.stat().st_mtime)
        elif path.is_file():
            newest = max(newest, path.stat().st_mtime)
    return newest


def install_frontend_dependencies(npm: str, frontend: Path) -> None:
    """`npm ci`, falling back to `npm install` (which keeps the lock file as it is) when `npm ci`
    refuses: some registries (this project's CI mirror among them) cannot serve platform-only
    optional packages of other systems, which `npm ci` then reports as a lock mismatch."""
    if subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=frontend).returncode != 0:
        subprocess.run([npm, "install", "--no-audit", "--no-fund"], cwd=frontend, check=True)


class FrontendBuildHook(BuildHookInterface):  # type: ignore[type-arg]
    PLUGIN_NAME = "frontend"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        root = Path(self.root)
        frontend = root / "frontend"
        built = root / "server" / "static" / "index.html"
        if os.environ.get("LH_SKIP_FRONTEND_BUILD") == "1" or not (frontend / "package.json").is_file():
            return
        if built.is_file() and built.stat().st_mtime >= _newest([frontend / s for s in SOURCES]):
            return
        npm = shutil.which("npm")
        if npm is None:
            raise RuntimeError(
                "building the frontend needs Node.js and npm (https://nodejs.org); install them, "
                "or set LH_SKIP_FRONTEND_BUILD=1 to install the server without its UI"
            )
        if not (frontend / "node_modules").is_dir():
            install_frontend_dependencies(npm, frontend)
        subprocess.run([npm, "run", "build"], cwd=frontend, check=True)
