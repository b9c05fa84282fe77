"""Write the release version, taken from a git tag, into every file that carries it.

Usage (from the repo root; standard library only, so it runs before anything is installed):

    python scripts/set_version.py v1.2.3          # or: GITHUB_REF_NAME=v1.2.3 python scripts/set_version.py
    python scripts/set_version.py v1.3.0-rc.2     # a pre-release: 1.3.0-rc.2 (npm), 1.3.0rc2 (Python)
    python scripts/set_version.py --check         # exit 1 unless every carrier agrees (no writes)

A tag is `v` + MAJOR.MINOR.PATCH (no leading zeros), optionally `-alpha.N`, `-beta.N`, `-rc.N` or
`-dev.N`. Anything else is refused with exit status 2 and a message saying what a tag looks like,
before any file is touched. The carriers (`CARRIERS`): pyproject.toml `[project] version` and
server/__init__.py `__version__` get the PEP 440 spelling (`1.3.0rc2`), electron/package.json (the
app and artifact version electron-builder uses) and frontend/package.json, with their
package-lock.json files, get the SemVer spelling (`1.3.0-rc.2`). With `GITHUB_OUTPUT` set, the
versions are appended to it as `version=`, `python_version=`, `tag=` and `prerelease=true|false`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

TAG = re.compile(
    r"v(?P<core>(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)\.(?:0|[1-9]\d*))"
    r"(?:-(?P<pre>alpha|beta|rc|dev)\.(?P<n>0|[1-9]\d*))?"
)
PEP440_PRE = {"alpha": "a", "beta": "b", "rc": "rc", "dev": ".dev"}
TAG_HELP = (
    "a release tag is v<major>.<minor>.<patch>, optionally -alpha.N, -beta.N, -rc.N or -dev.N (e.g. v1.2.3)"
)


class BadTag(ValueError):
    """The tag is not a release tag (message: what was given and what a tag looks like)."""


@dataclass(frozen=True)
class Version:
    semver: str
    """npm / electron-builder spelling, e.g. `1.3.0-rc.2`."""
    pep440: str
    """Python spelling, e.g. `1.3.0rc2`."""

    @property
    def prerelease(self) -> bool:
        return "-" in self.semver


def parse_tag(tag: str) -> Version:
    """`v1.2.3` -> Version('1.2.3', '1.2.3'); `refs/tags/` is stripped. Raises BadTag."""
    given = tag.strip()
    name = given.removeprefix("refs/tags/")
    match = TAG.fullmatch(name)
    if match is None:
        raise BadTag(f"{given!r} is not a release tag: {TAG_HELP}")
    core, pre, n = match["core"], match["pre"], match["n"]
    if pre is None:
        return Version(core, core)
    return Version(f"{core}-{pre}.{n}", f"{core}{PEP440_PRE[pre]}{n}")


# ------------------------------------------------------------------------------------ carriers
PYPROJECT_VERSION = re.compile(r'(?ms)(^\[project\]\s*$.*?^version\s*=\s*")([^"]*)(")')
DUNDER_VERSION = re.compile(r'(?m)^(__version__\s*=\s*")([^"]*)(")')


def _sub_one(pattern: re.Pattern[str], text: str, value: str, path: str) -> str:
    new, count = pattern.subn(lambda m: m[1] + value + m[3], text, count=1)
    if count != 1:
        raise SystemExit(f"set_version: {path}: no version field found to write")
    return new


def _read_one(pattern: re.Pattern[str], text: str) -> str | None:
    match = pattern.search(text)
    return match[2] if match else None


def _json_versions(data: dict[str, Any], lock: bool) -> list[str]:
    found = [data.get("version")]
    if lock:
        found.append(data.get("packages", {}).get("", {}).get("version"))
    return [str(v) for v in found]


def _json_write(text: str, version: str, lock: bool) -> str:
    """Replace only the top-level `"version"` (and, in a lock file, `packages[""].version`),
    keeping the file's formatting: npm writes 2-space JSON with a trailing newline."""
    data = json.loads(text)
    data["version"] = version
    if lock and "" in data.get("packages", {}):
        data["packages"][""]["version"] = version
    indent = 2 if text.startswith("{\n  ") else None
    return json.dumps(data, indent=indent, ensure_ascii=False) + ("\n" if text.endswith("\n") else "")


@dataclass(frozen=True)
class Carrier:
    path: str
    spelling: str  # "pep440" | "semver"
    read: Callable[[str], list[str | None]]
    write: Callable[[str, str, str], str]


def _json_carrier(path: str, lock: bool) -> Carrier:
    return Carrier(
        path,
        "semver",
        lambda text: list(_json_versions(json.loads(text), lock)),
        lambda text, v, _p: _json_write(text, v, lock),
    )


CARRIERS: tuple[Carrier, ...] = (
    Carrier(
        "pyproject.toml",
        "pep440",
        lambda text: [_read_one(PYPROJECT_VERSION, text)],
        lambda text, v, p: _sub_one(PYPROJECT_VERSION, text, v, p),
    ),
    Carrier(
        "server/__init__.py",
        "pep440",
        lambda text: [_read_one(DUNDER_VERSION, text)],
        lambda text, v, p: _sub_one(DUNDER_VERSION, text, v, p),
    ),
    _json_carrier("electron/package.json", lock=False),
    _json_carrier("electron/package-lock.json", lock=True),
    _json_carrier("frontend/package.json", lock=False),
    _json_carrier("frontend/package-lock.json", lock=True),
)


def current_versions(root: Path = ROOT) -> dict[str, list[str | None]]:
    """{carrier path: the version(s) it holds now}."""
    return {c.path: c.read((root / c.path).read_text(encoding="utf-8")) for c in CARRIERS}


def write_version(version: Version, root: Path = ROOT) -> list[str]:
    """Write `version` into every carrier under `root`; returns the paths changed. Every file is
    read and rewritten in memory first, so a carrier that cannot be written leaves all untouched."""
    planned: list[tuple[Path, str, str]] = []
    for carrier in CARRIERS:
        path = root / carrier.path
        text = path.read_text(encoding="utf-8")
        value = version.pep440 if carrier.spelling == "pep440" else version.semver
        planned.append((path, text, carrier.write(text, value, carrier.path)))
    changed = []
    for path, old, new in planned:
        if new != old:
            path.write_text(new, encoding="utf-8", newline="")
            changed.append(path.relative_to(root).as_posix())
    return changed


def check(root: Path = ROOT) -> list[str]:
    """Problems (empty when every carrier holds the same version in its own spelling)."""
    found = current_versions(root)
    semver = found["electron/package.json"][0] or ""
    try:
        expected = parse_tag("v" + semver)
    except BadTag:
        return [f"electron/package.json holds {semver!r}, not a release version"]
    problems = []
    for carrier in CARRIERS:
        want = expected.pep440 if carrier.spelling == "pep440" else expected.semver
        for value in found[carrier.path]:
            if value != want:
                problems.append(f"{carrier.path} holds {value!r}, expected {want!r}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tag", nargs="?", help="the release tag (default: $GITHUB_REF_NAME)")
    parser.add_argument("--check", action="store_true", help="only check that every carrier agrees")
    parser.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.check:
        problems = check(args.root)
        for problem in problems:
            print(f"set_version: {problem}", file=sys.stderr)
        return 1 if problems else 0
    tag = args.tag if args.tag is not None else os.environ.get("GITHUB_REF_NAME")
    if not tag:
        print(f"set_version: no tag given (argument or GITHUB_REF_NAME): {TAG_HELP}", file=sys.stderr)
        return 2
    try:
        version = parse_tag(tag)
    except BadTag as error:
        print(f"set_version: {error}", file=sys.stderr)
        return 2
    changed = write_version(version, args.root)
    print(f"version {version.semver} (Python {version.pep440}); wrote {', '.join(changed) or 'nothing new'}")
    output = os.environ.get("GITHUB_OUTPUT")
    if output:
        with open(output, "a", encoding="utf-8") as out:
            out.write(f"version={version.semver}\npython_version={version.pep440}\n")
            out.write(f"tag=v{version.semver}\nprerelease={'true' if version.prerelease else 'false'}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
