"""The release workflow's steps that can run off GitHub, run here (`make release-dry-run`).

Usage: .venv/bin/python scripts/release_dry_run.py [--tag v0.0.0-dev.0]

Works on a temporary copy of the committed tree (`git archive HEAD`; electron/node_modules linked
in), so the checkout is never changed. In order, each printing `ok ...` or stopping with exit 1:

1. set_version: the tag's version is written into every carrier and `--check` agrees; a malformed
   tag (`1.2`) is refused with exit 2 and no file changed.
2. The workflow: test_workflow_lint.py on the copy (structure, secrets hygiene, actionlint,
   shellcheck of every bash `run:` script).
3. The builder config and the updater: electron/test/builder-config.test.cjs (electron-builder's
   own schema validation, with the workflow's publish owner/repo overrides) and updater.test.cjs.
4. The "Find the signing inputs" step's own script, run with bash under the secret combinations
   (none; a certificate only; certificate + Apple ID; certificate + API key; Windows .pfx; Azure):
   the flags that choose the packaging steps are as expected.
5. The frozen server, when dist/learning-harness-server/ exists: the glibc it needs (reported
   against 2.35, the CI ceiling; this machine's own glibc is what it was built on) and the scripted
   turn smoke test; without a bundle, the smoke test against `python -m server`.
6. The assemble and publish jobs' scripts on placeholder installers named as electron-builder
   names them for this version: `release_assets.py collect` (merged latest-mac.yml, SHA256SUMS)
   and the publish step's script with `gh` replaced by a recorder on PATH, which prints the
   `gh release create` command it would have run (nothing is published).

Not run here (no Electron binary, no macOS/Windows, no certificates): PyInstaller on the three
OSes, electron-builder packaging, signing, notarization, the upload and the real release.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
WORKFLOW = Path(".github/workflows/release.yml")


class DryRunFailed(RuntimeError):
    pass


def sh(
    args: list[str], cwd: Path, env: dict[str, str] | None = None, check: bool = True
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    if check and done.returncode != 0:
        raise DryRunFailed(f"{' '.join(args)} exited {done.returncode}:\n{done.stdout}{done.stderr}")
    return done


def copy_tree(dest: Path) -> None:
    archive = subprocess.run(["git", "archive", "HEAD"], cwd=ROOT, capture_output=True, check=True)
    subprocess.run(["tar", "x", "-C", str(dest)], input=archive.stdout, check=True)
    modules = ROOT / "electron" / "node_modules"
    if not modules.is_dir():
        raise DryRunFailed("electron/node_modules is missing: make electron/node_modules")
    (dest / "electron" / "node_modules").symlink_to(modules)
    dist = ROOT / "dist"
    if dist.is_dir():
        (dest / "dist").symlink_to(dist)


def load_workflow(tree: Path) -> dict[str, Any]:
    import yaml

    data = yaml.safe_load((tree / WORKFLOW).read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def step(workflow: dict[str, Any], job: str, name_start: str) -> dict[str, Any]:
    for candidate in workflow["jobs"][job]["steps"]:
        if candidate.get("name", "").startswith(name_start):
            return dict(candidate)
    raise DryRunFailed(f"no step {name_start!r} in job {job}")


def run_step_script(script: str, cwd: Path, env: dict[str, str]) -> dict[str, str]:
    """Run a workflow `run:` script as GitHub does (bash -eo pipefail); returns its outputs."""
    with tempfile.NamedTemporaryFile("r", suffix=".out", delete=False) as out:
        output = Path(out.name)
    try:
        full = {"PATH": os.environ["PATH"], "GITHUB_OUTPUT": str(output), **env}
        sh(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script], cwd, full)
        pairs = [line.split("=", 1) for line in output.read_text().splitlines() if "=" in line]
        return {k: v for k, v in pairs}
    finally:
        output.unlink(missing_ok=True)


def dry_run(tag: str) -> None:
    python = sys.executable
    with tempfile.TemporaryDirectory(prefix="lh-release-dry-") as tmp:
        tree = Path(tmp) / "tree"
        tree.mkdir()
        copy_tree(tree)
        print(f"copy of HEAD in {tree}")

        # 1. the version from the tag
        done = sh([python, "scripts/set_version.py", tag], tree, {**os.environ, "GITHUB_OUTPUT": os.devnull})
        print(f"ok 1a set_version {tag}: {done.stdout.strip()}")
        sh([python, "scripts/set_version.py", "--check"], tree)
        print("ok 1b set_version --check: every carrier agrees")
        bad = sh([python, "scripts/set_version.py", "1.2"], tree, check=False)
        if bad.returncode != 2 or "v<major>.<minor>.<patch>" not in bad.stderr:
            raise DryRunFailed(f"a malformed tag was not refused: {bad.returncode} {bad.stderr}")
        print(f"ok 1c a malformed tag is refused: {bad.stderr.strip()}")

        # 2. the workflow itself
        lint = sh(
            [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/desktop/test_workflow_lint.py"],
            tree,
        )
        print(
            f"ok 2 workflow lint (actionlint, shellcheck, structure): {lint.stdout.strip().splitlines()[-1]}"
        )

        # 3. builder config + updater
        node = shutil.which("node")
        if node is None:
            raise DryRunFailed("node is not on PATH")
        tests = sh(
            [node, "--test", "test/builder-config.test.cjs", "test/updater.test.cjs"], tree / "electron"
        )
        summary = [
            line for line in tests.stdout.splitlines() if line.startswith(("# pass", "# fail", "# skipped"))
        ]
        print(f"ok 3 electron-builder config and updater: {', '.join(s[2:] for s in summary)}")

        # 4. the signing flags step under each secret combination
        workflow = load_workflow(tree)
        signing = step(workflow, "desktop", "Find the signing inputs")["run"]
        cases = [
            ({}, "unsigned", "unsigned"),
            ({"MAC_CSC_LINK": "x"}, "signed", "unsigned"),
            (
                {
                    "MAC_CSC_LINK": "x",
                    "APPLE_ID": "a",
                    "APPLE_APP_SPECIFIC_PASSWORD": "p",
                    "APPLE_TEAM_ID": "t",
                },
                "notarized",
                "unsigned",
            ),
            ({"MAC_CSC_LINK": "x", "APPLE_ID": "a"}, "signed", "unsigned"),
            (
                {
                    "MAC_CSC_LINK": "x",
                    "APPLE_API_KEY_P8": "k",
                    "APPLE_API_KEY_ID": "i",
                    "APPLE_API_ISSUER": "s",
                },
                "notarized",
                "unsigned",
            ),
            ({"WIN_CSC_LINK": "x"}, "unsigned", "pfx"),
            (
                {"WIN_CSC_LINK": "x", "AZURE_CLIENT_SECRET": "c", "AZURE_SIGN_ENDPOINT": "e"},
                "unsigned",
                "azure",
            ),
        ]
        for env, mac, win in cases:
            got = run_step_script(signing, tree, env)
            if got != {"mac": mac, "win": win}:
                raise DryRunFailed(f"signing flags for {sorted(env)}: {got}, expected mac={mac} win={win}")
        print(f"ok 4 signing flags: {len(cases)} secret combinations choose the expected packaging steps")

        # 5. the frozen server
        name = "learning-harness-server"
        bundle = tree / "dist" / name
        if (bundle / name).is_file():
            glibc = sh(
                [python, "scripts/release_assets.py", "glibc", str(bundle), "--max", "2.35"],
                tree,
                check=False,
            )
            verdict = (
                "within 2.35" if glibc.returncode == 0 else "ABOVE 2.35 (built here on this machine's glibc)"
            )
            print(f"ok 5a glibc of the local bundle: {glibc.stdout.strip().splitlines()[0]} -> {verdict}")
            for line in glibc.stderr.strip().splitlines()[:5]:
                print(f"       {line}")
            smoke = sh([python, "scripts/smoke_frozen_turn.py"], tree)
        else:
            print("-- 5a no frozen bundle (dist/learning-harness-server): glibc check skipped")
            smoke = sh([python, "scripts/smoke_frozen_turn.py", "--python"], tree)
        print(
            f"ok 5b {smoke.stdout.strip().splitlines()[0]}: "
            + "; ".join(line[3:] for line in smoke.stdout.splitlines() if line.startswith("ok "))
        )

        # 6. assemble and publish on placeholder installers
        version = sh(
            [python, "-c", "import json;print(json.load(open('electron/package.json'))['version'])"], tree
        )
        v = version.stdout.strip()
        artifacts = Path(tmp) / "artifacts"
        placeholders = {
            "learning-harness-linux-x64": [f"learning-harness-{v}-linux-x86_64.AppImage", "latest-linux.yml"],
            "learning-harness-windows-x64": [
                f"learning-harness-{v}-win-x64.exe",
                f"learning-harness-{v}-win-x64.exe.blockmap",
                "latest.yml",
            ],
        }
        for arch in ("x64", "arm64"):
            placeholders[f"learning-harness-macos-{arch}"] = [
                f"learning-harness-{v}-mac-{arch}.{ext}" for ext in ("dmg", "zip", "zip.blockmap")
            ] + ["latest-mac.yml"]
        for job, files in placeholders.items():
            (artifacts / job).mkdir(parents=True)
            for file in files:
                path = artifacts / job / file
                if file == "latest-mac.yml":
                    arch = job.rsplit("-", 1)[1]
                    zipname = f"learning-harness-{v}-mac-{arch}.zip"
                    path.write_text(
                        f"version: {v}\nfiles:\n  - url: {zipname}\n    sha512: placeholder\n    size: 1\n"
                        f"path: {zipname}\nsha512: placeholder\nreleaseDate: '2026-01-01T00:00:00.000Z'\n"
                    )
                elif file.startswith("latest"):
                    path.write_text(f"version: {v}\n")
                else:
                    path.write_bytes(f"placeholder {file}\n".encode())
        release = tree / "release"
        collect = sh([python, "scripts/release_assets.py", "collect", str(artifacts), str(release)], tree)
        names = collect.stdout.split()
        print(f"ok 6a collect: {len(names)} assets: {', '.join(names)}")
        for line in (release / "SHA256SUMS").read_text().splitlines()[:3]:
            print(f"       {line}")
        recorder = Path(tmp) / "bin"
        recorder.mkdir()
        (recorder / "gh").write_text(
            '#!/bin/sh\nprintf "gh"; for a in "$@"; do printf " [%s]" "$a"; done; echo\n'
        )
        (recorder / "gh").chmod(0o755)
        publish = step(workflow, "publish", "Create the release")
        got = sh(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", publish["run"]],
            tree,
            {
                "PATH": f"{recorder}{os.pathsep}{os.environ['PATH']}",
                "RELEASE_TAG": tag,
                "VERSION": v,
                "PRERELEASE": "true" if "-" in v else "false",
            },
        )
        command = next(line for line in got.stdout.splitlines() if line.startswith("gh "))
        print(f"ok 6b the publish step would run: {command.replace(str(tree) + '/', '')[:400]}")
    print("release dry run: passed")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tag", default="v0.0.0-dev.0", help="the fake tag to release as")
    args = parser.parse_args(argv)
    try:
        dry_run(args.tag)
    except DryRunFailed as error:
        print(f"release dry run: FAILED: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
