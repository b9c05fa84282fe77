"""The import law is machine-checked, and every contract is shown to fire (architecture §3).

Each case copies the `server` package into a temporary tree, adds (or, for a cycle, rewrites) one
module with a forbidden import, and runs `lint-imports` there: the named contract must break, and
only because of it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT = [
    sys.executable,
    "-c",
    "import sys; from importlinter.cli import lint_imports_command as c; sys.exit(c())",
]


def lint(tree: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*LINT, "--config", str(tree / "pyproject.toml"), "--no-cache"],
        cwd=tree,
        env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_real_tree_keeps_the_law() -> None:
    result = lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "7 kept, 0 broken" in result.stdout


@pytest.mark.parametrize(
    "module, source, contract",
    [
        pytest.param(
            "server/core/_violation.py",
            "import server.agent.prompts\n",
            "layers point inward",
            id="core-imports-agent",
        ),
        pytest.param(
            "server/store/_violation.py",
            "import server.agent.machine_room.engine\n",
            "layers point inward",
            id="store-imports-sibling-agent",
        ),
        pytest.param(
            "server/core/_violation.py",
            "import httpx\n",
            "the core does no IO and calls no model",
            id="core-imports-httpx",
        ),
        pytest.param(
            "server/agent/_violation.py",
            "import fastapi\n",
            "only the transport layer knows the web framework",
            id="agent-imports-fastapi",
        ),
        pytest.param(
            "server/core/workbench/_violation.py",
            "import server.core.practice.chains\n",
            "systems meet only through shared roots; the machine room serves them all",
            id="core-workbench-imports-practice",
        ),
        pytest.param(
            "server/agent/classroom/_violation.py",
            "import server.agent.library.extraction\n",
            "systems meet only through shared roots; the machine room serves them all",
            id="agent-classroom-imports-library",
        ),
        pytest.param(
            "server/services/practice/_violation.py",
            "import server.services.workbench.runner\n",
            "systems meet only through shared roots; the machine room serves them all",
            id="services-practice-imports-workbench",
        ),
        pytest.param(
            "server/store/library/_violation.py",
            "import server.store.classroom.chats\n",
            "systems meet only through shared roots; the machine room serves them all",
            id="store-library-imports-classroom",
        ),
        pytest.param(
            "server/api/routes/practice/_violation.py",
            "import server.api.routes.library.graph\n",
            "systems meet only through shared roots; the machine room serves them all",
            id="routes-practice-imports-library",
        ),
        pytest.param(
            "server/services/machine_room/_violation.py",
            "import server.services.classroom.turn\n",
            "systems meet only through shared roots; the machine room serves them all",
            id="machine-room-imports-classroom",
        ),
        pytest.param(
            "server/core/machine_room/_violation.py",
            "import server.core.library.graph\n",
            "systems meet only through shared roots; the machine room serves them all",
            id="core-machine-room-imports-library",
        ),
        pytest.param(
            "server/api/machine_room/_violation.py",
            "import server.api.routes.events\n",
            "the API's machine room (guard, policy, static files) knows no route",
            id="api-plumbing-imports-a-route",
        ),
        pytest.param(
            "server/services/library/feed.py",
            "from typing import TYPE_CHECKING\n\n"
            "if TYPE_CHECKING:\n    import server.services.library.extraction\n",
            "no import cycles between siblings",
            id="library-feed-imports-extraction-back-under-type-checking",
        ),
        pytest.param(
            "server/api/_violation.py",
            "import server.store.classroom.chats\n",
            "storage adapters are wired in one place",
            id="api-imports-store",
        ),
    ],
)
def test_each_contract_fires(tmp_path: Path, module: str, source: str, contract: str) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(ROOT / "server", tree / "server", ignore=shutil.ignore_patterns("static", "__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tree / "pyproject.toml")
    (tree / module).write_text(source)
    result = lint(tree)
    assert result.returncode != 0
    broken = [line for line in result.stdout.splitlines() if line.endswith("BROKEN")]
    assert broken == [f"{contract} BROKEN"], result.stdout
