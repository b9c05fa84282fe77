"""Release helpers for .github/workflows/release.yml (issue 19, item 5). Standard library + PyYAML.

    python scripts/release_assets.py glibc DIR [--max 2.35]
        Every ELF file under DIR (the frozen server, the packaged app) may need at most glibc MAX:
        prints the newest `GLIBC_x.y` symbol version each file needs and exits 1 naming the files
        above MAX. 2.35 is Ubuntu 22.04's glibc (Debian 12 has 2.36), so a Linux build passing
        this starts on both.

    python scripts/release_assets.py collect ARTIFACTS OUT
        ARTIFACTS holds one folder per build job (as actions/download-artifact lays them out).
        Copies the installers and electron-updater files (`*.dmg *.zip *.exe *.AppImage
        *.blockmap latest*.yml`) into OUT, flat; merges the per-architecture `latest-mac.yml`
        files of the x64 and arm64 macOS jobs into one (electron-updater picks the file whose
        name says arm64 on Apple Silicon, any other on Intel); refuses two different files of
        the same name, an empty set, or manifests of different versions; writes OUT/SHA256SUMS
        (`<sha256>  <name>` per file, sorted, the format `sha256sum -c` reads).

Exit status 0 on success, 1 on a failed check, 2 on bad usage; messages name the file.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import shutil
import sys
from pathlib import Path
from typing import Any

GLIBC = re.compile(rb"GLIBC_(\d+)\.(\d+)(?:\.(\d+))?\x00")
ASSET_PATTERNS = ("*.dmg", "*.zip", "*.exe", "*.AppImage", "*.blockmap", "latest*.yml")
MAC_MANIFEST = "latest-mac.yml"


class Refused(Exception):
    """A check failed (message: which file and why)."""


# ----------------------------------------------------------------------------------- glibc
def glibc_needed(path: Path) -> tuple[int, ...] | None:
    """The newest GLIBC_x.y[.z] version named in an ELF file's version strings, or None (not
    ELF, or no glibc symbol versions: e.g. a static or non-glibc binary)."""
    with path.open("rb") as file:
        if file.read(4) != b"\x7fELF":
            return None
        data = file.read()
    versions = [tuple(int(g) for g in m.groups() if g is not None) for m in GLIBC.finditer(data)]
    return max(versions) if versions else None


def parse_version(text: str) -> tuple[int, ...]:
    if not re.fullmatch(r"\d+\.\d+(?:\.\d+)?", text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a glibc version such as 2.35")
    return tuple(int(p) for p in text.split("."))


def check_glibc(root: Path, ceiling: tuple[int, ...]) -> tuple[dict[str, tuple[int, ...]], list[str]]:
    """({relative path: newest version needed}, [paths above `ceiling`])."""
    needed: dict[str, tuple[int, ...]] = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            version = glibc_needed(path)
            if version is not None:
                needed[path.relative_to(root).as_posix()] = version
    return needed, [p for p, v in needed.items() if v > ceiling]


# ----------------------------------------------------------------------------------- collect
def _yaml() -> Any:
    try:
        import yaml
    except ImportError:
        raise Refused("PyYAML is needed to merge latest-mac.yml: pip install pyyaml") from None
    return yaml


def merge_mac_manifests(texts: list[str]) -> str:
    """One latest-mac.yml from the x64 and arm64 builds' manifests (same version): the union of
    their `files` (by url), `path`/`sha512` (the legacy single-file fields) from the x64 one."""
    yaml = _yaml()
    docs = [yaml.safe_load(text) for text in texts]
    versions = {str(doc.get("version")) for doc in docs}
    if len(versions) != 1:
        raise Refused(f"{MAC_MANIFEST}: the builds disagree on the version: {sorted(versions)}")
    files: dict[str, Any] = {}
    for doc in docs:
        for entry in doc.get("files") or []:
            files.setdefault(entry["url"], entry)
    if not files:
        raise Refused(f"{MAC_MANIFEST}: no files listed")
    legacy = next((d for d in docs if "arm64" not in str(d.get("path", ""))), docs[0])
    merged = {
        "version": versions.pop(),
        "files": [files[url] for url in sorted(files)],
        "path": legacy.get("path"),
        "sha512": legacy.get("sha512"),
        "releaseDate": max(str(d.get("releaseDate", "")) for d in docs),
    }
    return str(yaml.safe_dump(merged, sort_keys=False))


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def collect(artifacts: Path, out: Path) -> list[str]:
    """Copy the release assets flat into `out`, merge the macOS manifests, write SHA256SUMS.
    Returns the asset names (SHA256SUMS last)."""
    if not artifacts.is_dir():
        raise Refused(f"{artifacts} is not a folder")
    found: dict[str, list[Path]] = {}
    for pattern in ASSET_PATTERNS:
        for path in sorted(artifacts.rglob(pattern)):
            if path.is_file():
                found.setdefault(path.name, []).append(path)
    if not any(name != MAC_MANIFEST and not name.startswith("latest") for name in found):
        raise Refused(f"no installers under {artifacts} (looked for {', '.join(ASSET_PATTERNS)})")
    out.mkdir(parents=True, exist_ok=True)
    names = []
    for name, paths in sorted(found.items()):
        if name == MAC_MANIFEST and len(paths) > 1:
            texts = [p.read_text(encoding="utf-8") for p in paths]
            (out / name).write_text(merge_mac_manifests(texts), encoding="utf-8")
        else:
            digests = {sha256(p) for p in paths}
            if len(digests) > 1:
                where = ", ".join(str(p.relative_to(artifacts)) for p in paths)
                raise Refused(f"{name}: different files of the same name ({where})")
            shutil.copyfile(paths[0], out / name)
        names.append(name)
    sums = "".join(f"{sha256(out / name)}  {name}\n" for name in names)
    (out / "SHA256SUMS").write_text(sums, encoding="utf-8", newline="\n")
    return [*names, "SHA256SUMS"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    glibc = commands.add_parser("glibc", help="no ELF file needs a glibc newer than --max")
    glibc.add_argument("root", type=Path)
    glibc.add_argument("--max", type=parse_version, default=(2, 35))
    gather = commands.add_parser("collect", help="release assets + merged latest-mac.yml + SHA256SUMS")
    gather.add_argument("artifacts", type=Path)
    gather.add_argument("out", type=Path)
    args = parser.parse_args(argv)
    try:
        if args.command == "glibc":
            if not args.root.is_dir():
                raise Refused(f"{args.root} is not a folder")
            needed, above = check_glibc(args.root, args.max)
            if not needed:
                raise Refused(f"no ELF file with glibc symbol versions under {args.root}")
            ceiling = ".".join(map(str, args.max))
            newest = max(needed.values())
            print(f"{len(needed)} ELF files; the newest glibc needed is {'.'.join(map(str, newest))}")
            if above:
                for path in above:
                    print(f"  {path} needs glibc {'.'.join(map(str, needed[path]))}", file=sys.stderr)
                raise Refused(f"{len(above)} files need a glibc newer than {ceiling}")
            print(f"ok: every file runs on glibc {ceiling} (Ubuntu 22.04; Debian 12 has 2.36)")
        else:
            for name in collect(args.artifacts, args.out):
                print(name)
    except Refused as error:
        print(f"release_assets: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
