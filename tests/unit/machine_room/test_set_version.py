"""scripts/set_version.py: the release tag is the one source of the version (issue 19, item 5).

Runs the script as the workflow does (a subprocess on a copy of the real carrier files), so the
regexes are checked against the files as they are, not against samples.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.procs import ROOT

SCRIPT = ROOT / "scripts" / "set_version.py"
_spec = importlib.util.spec_from_file_location("set_version", SCRIPT)
assert _spec is not None and _spec.loader is not None
set_version = importlib.util.module_from_spec(_spec)
sys.modules["set_version"] = set_version  # dataclasses look their module up by name
_spec.loader.exec_module(set_version)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of every carrier file, laid out as in the repo, at version 0.1.0 (the release
    workflow runs these tests after it has set the tag's version in the checkout)."""
    for carrier in set_version.CARRIERS:
        target = tmp_path / carrier.path
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / carrier.path, target)
    set_version.write_version(set_version.parse_tag("v0.1.0"), tmp_path)
    return tmp_path


def inherited() -> dict[str, str]:
    """This environment without the workflow's own GITHUB_OUTPUT / GITHUB_REF_NAME (the release
    workflow runs these tests; Windows needs SYSTEMROOT and the like, so not an empty env)."""
    return {k: v for k, v in os.environ.items() if k not in ("GITHUB_OUTPUT", "GITHUB_REF_NAME")}


def run(tree: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--root", str(tree), *args],
        capture_output=True,
        text=True,
        env={**inherited(), **(env or {})},
        timeout=30,
    )


def snapshot(tree: Path) -> dict[str, bytes]:
    return {c.path: (tree / c.path).read_bytes() for c in set_version.CARRIERS}


def test_the_repo_carriers_agree() -> None:
    assert set_version.check() == []


@pytest.mark.parametrize(
    ("tag", "semver", "pep440"),
    [
        ("v1.2.3", "1.2.3", "1.2.3"),
        ("v0.10.0", "0.10.0", "0.10.0"),
        ("refs/tags/v2.0.1", "2.0.1", "2.0.1"),
        ("v1.3.0-rc.2", "1.3.0-rc.2", "1.3.0rc2"),
        ("v1.3.0-beta.0", "1.3.0-beta.0", "1.3.0b0"),
        ("v1.3.0-alpha.4", "1.3.0-alpha.4", "1.3.0a4"),
        ("v0.0.0-dev.17", "0.0.0-dev.17", "0.0.0.dev17"),
    ],
)
def test_a_tag_sets_every_carrier(tree: Path, tag: str, semver: str, pep440: str, tmp_path: Path) -> None:
    output = tmp_path / "github_output"
    done = run(tree, tag, env={"GITHUB_OUTPUT": str(output)})
    assert done.returncode == 0, done.stderr
    assert f"version {semver} (Python {pep440})" in done.stdout
    assert tomllib.loads((tree / "pyproject.toml").read_text())["project"]["version"] == pep440
    assert f'__version__ = "{pep440}"' in (tree / "server" / "__init__.py").read_text()
    for side in ("electron", "frontend"):
        assert json.loads((tree / side / "package.json").read_text())["version"] == semver
        lock = json.loads((tree / side / "package-lock.json").read_text())
        assert lock["version"] == semver and lock["packages"][""]["version"] == semver
    assert set_version.check(tree) == []
    lines = output.read_text().splitlines()
    assert f"version={semver}" in lines and f"python_version={pep440}" in lines
    assert f"prerelease={'true' if '-' in semver else 'false'}" in lines


def test_only_the_version_changes(tree: Path) -> None:
    """Everything but the version field stays byte-for-byte (npm's formatting, other `version =`
    keys in pyproject.toml such as tool sections, dependencies' versions in the lock files)."""
    before = snapshot(tree)
    assert run(tree, "v7.8.9").returncode == 0
    after = snapshot(tree)
    for path, old in before.items():
        new = after[path].decode()
        restored = new.replace('"7.8.9"', '"0.1.0"')
        assert "7.8.9" in new and restored == old.decode(), path
    # Only the package's own entries moved in the lock file: dependencies keep their versions.
    lock_before = json.loads(before["electron/package-lock.json"])
    lock_after = json.loads(after["electron/package-lock.json"])
    assert {k: v for k, v in lock_after["packages"].items() if k} == {
        k: v for k, v in lock_before["packages"].items() if k
    }


def test_the_same_tag_twice_writes_nothing_new(tree: Path) -> None:
    assert run(tree, "v3.1.4").returncode == 0
    again = run(tree, "v3.1.4")
    assert again.returncode == 0 and "wrote nothing new" in again.stdout


def test_github_ref_name_is_the_default(tree: Path) -> None:
    done = run(tree, env={"GITHUB_REF_NAME": "v4.5.6"})
    assert done.returncode == 0, done.stderr
    assert json.loads((tree / "electron" / "package.json").read_text())["version"] == "4.5.6"


@pytest.mark.parametrize(
    "tag",
    [
        "1.2.3",  # no v
        "v1.2",
        "v1.2.3.4",
        "v01.2.3",  # leading zero
        "v1.2.3-rc",  # pre-release without a number
        "v1.2.3-RC.1",
        "v1.2.3-preview.1",
        "v1.2.3+build.5",
        "main",  # a branch name (workflow_dispatch without a tag)
        "v1.2.3\nversion=9.9.9",  # a second output line smuggled in
        "",
        " ",
    ],
)
def test_a_malformed_tag_is_refused_and_nothing_is_written(tree: Path, tag: str, tmp_path: Path) -> None:
    output = tmp_path / "github_output"
    before = snapshot(tree)
    done = run(tree, tag, env={"GITHUB_OUTPUT": str(output)})
    assert done.returncode == 2
    assert "v<major>.<minor>.<patch>" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert snapshot(tree) == before
    assert not output.exists()


def test_no_tag_at_all_is_refused(tree: Path) -> None:
    done = run(tree)
    assert done.returncode == 2 and "no tag given" in done.stderr


def test_check_names_the_carrier_that_disagrees(tree: Path) -> None:
    assert run(tree, "--check").returncode == 0
    init = tree / "server" / "__init__.py"
    init.write_text(init.read_text().replace('"0.1.0"', '"0.2.0"'))
    done = run(tree, "--check")
    assert done.returncode == 1
    assert "server/__init__.py holds '0.2.0', expected '0.1.0'" in done.stderr


def test_a_carrier_without_a_version_field_fails_before_any_write(tree: Path) -> None:
    init = tree / "server" / "__init__.py"
    init.write_text('"""no version here"""\n')
    before = snapshot(tree)
    done = run(tree, "v1.0.0")
    assert done.returncode != 0
    assert "server/__init__.py: no version field found" in done.stderr
    assert snapshot(tree) == before
