"""Every module the server imports at run time is a declared runtime dependency (issue 9, item 0).

`make run` installs `.[local]` without the `dev` extra: a module that arrives only with a test
tool (httpx through the dev extra) or only through another package's requirements (httpx2 through
pydantic-ai) works on a developer's machine and breaks a fresh one. This test reads every import in
`server/`, maps each top-level module to the distribution that provides it, and requires that
distribution to be named in `[project].dependencies` or the `local` extra (what `make run` installs).
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SERVER = ROOT / "server"

# Imported only inside functions that run in the frozen build's offline-model child or under the
# `local` extra; each is a module of a distribution of that extra.
OPTIONAL_LOCAL = {"llama_cpp"}


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_name(requirement: str) -> str:
    return _normalise(re.split(r"[\s\[<>=!~;]", requirement.strip(), maxsplit=1)[0])


def declared_runtime() -> tuple[set[str], set[str]]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    base = {_requirement_name(r) for r in project["dependencies"]}
    local = {_requirement_name(r) for r in project["optional-dependencies"]["local"]}
    return base, local


def server_imports() -> dict[str, set[str]]:
    """Top-level module -> the files that import it (relative imports and `server.*` skipped)."""
    found: dict[str, set[str]] = {}
    for path in SERVER.rglob("*.py"):
        if "static" in path.parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                top = name.split(".")[0]
                if top != "server" and top not in sys.stdlib_module_names:
                    found.setdefault(top, set()).add(str(path.relative_to(ROOT)))
    return found


def test_every_runtime_import_is_a_declared_dependency() -> None:
    base, local = declared_runtime()
    providers = packages_distributions()
    missing = []
    for module, files in sorted(server_imports().items()):
        distributions = {_normalise(d) for d in providers.get(module, [])}
        assert distributions, f"{module} (imported by {sorted(files)}) is not installed at all"
        allowed = base | local if module in OPTIONAL_LOCAL else base
        if not distributions & allowed:
            missing.append(f"{module} from {sorted(distributions)} (imported by {sorted(files)})")
    assert not missing, "imported at run time but not a runtime dependency: " + "; ".join(missing)


def test_the_check_sees_what_it_checks() -> None:
    """The scan is not vacuous: it finds the imports this issue was about."""
    imports = server_imports()
    assert {"httpx", "httpx2", "fastapi", "uvicorn", "pydantic_ai"} <= set(imports)
