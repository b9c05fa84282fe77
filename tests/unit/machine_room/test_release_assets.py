"""scripts/release_assets.py: the glibc ceiling of the Linux build and the release's asset set
(merged macOS update manifest, SHA256SUMS) (issue 19, item 5)."""

from __future__ import annotations

import hashlib
import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.procs import ROOT

SCRIPT = ROOT / "scripts" / "release_assets.py"
_spec = importlib.util.spec_from_file_location("release_assets", SCRIPT)
assert _spec is not None and _spec.loader is not None
release_assets = importlib.util.module_from_spec(_spec)
sys.modules["release_assets"] = release_assets
_spec.loader.exec_module(release_assets)


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=60)


def elf(path: Path, *versions: str) -> Path:
    """A file with an ELF magic and a .dynstr-like run of version strings."""
    path.parent.mkdir(parents=True, exist_ok=True)
    strings = b"".join(f"GLIBC_{v}\x00".encode() for v in versions)
    path.write_bytes(b"\x7fELF\x02\x01\x01" + b"\x00" * 57 + b"libc.so.6\x00" + strings)
    return path


def test_glibc_reports_the_newest_version_each_file_needs(tmp_path: Path) -> None:
    elf(tmp_path / "server" / "learning-harness-server", "2.2.5", "2.17", "2.34")
    elf(tmp_path / "server" / "_internal" / "libllama.so", "2.14", "2.35")
    (tmp_path / "server" / "data.txt").write_text("GLIBC_2.99\x00 is not in an ELF file")
    needed, above = release_assets.check_glibc(tmp_path, (2, 35))
    assert needed == {"server/_internal/libllama.so": (2, 35), "server/learning-harness-server": (2, 34)}
    assert above == []
    done = run("glibc", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "2 ELF files; the newest glibc needed is 2.35" in done.stdout


def test_a_file_built_against_a_newer_glibc_fails_the_check(tmp_path: Path) -> None:
    elf(tmp_path / "ok.so", "2.28")
    elf(tmp_path / "lib" / "too-new.so", "2.17", "2.38")
    done = run("glibc", str(tmp_path), "--max", "2.35")
    assert done.returncode == 1
    assert "lib/too-new.so needs glibc 2.38" in done.stderr
    assert "1 files need a glibc newer than 2.35" in done.stderr
    assert run("glibc", str(tmp_path), "--max", "2.38").returncode == 0


def test_glibc_check_on_real_binaries_of_this_machine() -> None:
    """The scan finds the versions in real ELF files (the interpreter's own extension modules)."""
    import _ctypes  # a compiled module of this Python

    needed = release_assets.glibc_needed(Path(_ctypes.__file__))
    if sys.platform.startswith("linux"):
        assert needed is not None and (2, 2) <= needed < (3,), needed
    assert release_assets.glibc_needed(SCRIPT) is None


def test_glibc_refuses_bad_input(tmp_path: Path) -> None:
    assert run("glibc", str(tmp_path / "missing")).returncode == 1
    empty = run("glibc", str(tmp_path))
    assert empty.returncode == 1 and "no ELF file" in empty.stderr
    bad = run("glibc", str(tmp_path), "--max", "two")
    assert bad.returncode == 2 and "not a glibc version" in bad.stderr


def mac_manifest(version: str, arch: str) -> str:
    name = f"learning-harness-{version}-mac-{arch}"
    doc = {
        "version": version,
        "files": [
            {"url": f"{name}.zip", "sha512": f"zip-{arch}", "size": 10},
            {"url": f"{name}.dmg", "sha512": f"dmg-{arch}", "size": 11},
        ],
        "path": f"{name}.zip",
        "sha512": f"zip-{arch}",
        "releaseDate": f"2026-12-03T10:0{0 if arch == 'x64' else 5}:00.000Z",
    }
    return yaml.safe_dump(doc, sort_keys=False)


@pytest.fixture
def artifacts(tmp_path: Path) -> Path:
    """What actions/download-artifact lays out: one folder per build job."""
    root = tmp_path / "artifacts"
    v = "1.2.3"
    for arch in ("x64", "arm64"):
        job = root / f"learning-harness-macos-{arch}"
        job.mkdir(parents=True)
        for ext in ("dmg", "zip", "zip.blockmap", "dmg.blockmap"):
            (job / f"learning-harness-{v}-mac-{arch}.{ext}").write_bytes(f"{arch}-{ext}".encode())
        (job / "latest-mac.yml").write_text(mac_manifest(v, arch))
        (job / "learning-harness-server.report.json").write_text("{}")
    win = root / "learning-harness-windows-x64"
    win.mkdir()
    (win / f"learning-harness-{v}-win-x64.exe").write_bytes(b"MZ installer")
    (win / f"learning-harness-{v}-win-x64.exe.blockmap").write_bytes(b"blockmap")
    (win / "latest.yml").write_text(f"version: {v}\n")
    linux = root / "learning-harness-linux-x64"
    linux.mkdir()
    (linux / f"learning-harness-{v}-linux-x86_64.AppImage").write_bytes(b"\x7fELF appimage")
    (linux / "latest-linux.yml").write_text(f"version: {v}\n")
    return root


def test_collect_flattens_merges_and_sums(artifacts: Path, tmp_path: Path) -> None:
    out = tmp_path / "release"
    done = run("collect", str(artifacts), str(out))
    assert done.returncode == 0, done.stderr
    names = done.stdout.split()
    assert names[-1] == "SHA256SUMS"
    assert sorted(p.name for p in out.iterdir()) == sorted(names)
    assert "learning-harness-server.report.json" not in names, "build reports are not release assets"
    assert {"latest.yml", "latest-linux.yml", "latest-mac.yml"} <= set(names)
    assert len([n for n in names if n.endswith(".dmg")]) == 2
    # The merged macOS manifest lists both architectures; the legacy path is the x64 zip.
    merged = yaml.safe_load((out / "latest-mac.yml").read_text())
    assert merged["version"] == "1.2.3"
    urls = [f["url"] for f in merged["files"]]
    assert sorted(urls) == urls and len(urls) == 4
    assert {u.split("-mac-")[1] for u in urls} == {"x64.zip", "x64.dmg", "arm64.zip", "arm64.dmg"}
    assert merged["path"] == "learning-harness-1.2.3-mac-x64.zip" and merged["sha512"] == "zip-x64"
    assert merged["releaseDate"] == "2026-12-03T10:05:00.000Z"
    # SHA256SUMS: every other asset, in sha256sum's format, and right.
    lines = (out / "SHA256SUMS").read_text().splitlines()
    assert [line.split("  ", 1)[1] for line in lines] == names[:-1]
    for line in lines:
        digest, name = line.split("  ", 1)
        assert hashlib.sha256((out / name).read_bytes()).hexdigest() == digest
    sha256sum = shutil.which("sha256sum")
    if sha256sum:
        check = subprocess.run([sha256sum, "-c", "SHA256SUMS"], cwd=out, capture_output=True, text=True)
        assert check.returncode == 0, check.stdout + check.stderr


def test_one_macos_build_keeps_its_manifest_as_is(artifacts: Path, tmp_path: Path) -> None:
    shutil.rmtree(artifacts / "learning-harness-macos-arm64")
    out = tmp_path / "release"
    assert run("collect", str(artifacts), str(out)).returncode == 0
    assert (out / "latest-mac.yml").read_text() == mac_manifest("1.2.3", "x64")


def test_collect_refuses_conflicts_and_nothing(artifacts: Path, tmp_path: Path) -> None:
    arm = artifacts / "learning-harness-macos-arm64" / "latest-mac.yml"
    arm.write_text(mac_manifest("1.2.4", "arm64"))
    done = run("collect", str(artifacts), str(tmp_path / "a"))
    assert done.returncode == 1 and "disagree on the version" in done.stderr
    arm.write_text(mac_manifest("1.2.3", "arm64"))
    (artifacts / "learning-harness-linux-x64" / "latest.yml").write_text("version: 9.9.9\n")
    done = run("collect", str(artifacts), str(tmp_path / "b"))
    assert done.returncode == 1 and "latest.yml: different files of the same name" in done.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    done = run("collect", str(empty), str(tmp_path / "c"))
    assert done.returncode == 1 and "no installers" in done.stderr
