"""The installed llama.cpp is the portable build (issue 9; docs/decisions/0009-portable-llama-cpp.md).

`scripts/install_llama_cpp.py` builds llama.cpp with `GGML_NATIVE=OFF` and no AVX-512/AMX. A
native build (pip's default, `-march=native`) on a CPU with AVX-512 would contain instructions on
`zmm` registers; this test disassembles the installed libraries and fails if any is there, so a
native wheel that slipped in (from pip's cache, or a plain `pip install`) is caught.
"""

from __future__ import annotations

import importlib.util
import platform
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "scripts"))

import install_llama_cpp  # noqa: E402


def llama_libraries() -> list[Path]:
    spec = importlib.util.find_spec("llama_cpp")
    if spec is None or not spec.submodule_search_locations:
        return []
    lib = Path(next(iter(spec.submodule_search_locations))) / "lib"
    return sorted(p for p in lib.glob("*.so*") if p.is_file() and not p.is_symlink())


@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"), reason="x86-64 only")
@pytest.mark.skipif(shutil.which("objdump") is None, reason="needs objdump (binutils)")
@pytest.mark.skipif(not llama_libraries(), reason="the `local` extra is not installed")
def test_the_installed_llama_cpp_has_no_avx512_instruction() -> None:
    libraries = llama_libraries()
    assert any("ggml-cpu" in p.name for p in libraries), libraries
    for library in libraries:
        listing = subprocess.run(
            ["objdump", "-d", "--no-show-raw-insn", str(library)], capture_output=True, text=True, check=True
        ).stdout
        assert "%zmm" not in listing, f"{library.name} holds AVX-512 code: not the portable build"
    cpu = next(p for p in libraries if "ggml-cpu" in p.name)
    listing = subprocess.run(
        ["objdump", "-d", "--no-show-raw-insn", str(cpu)], capture_output=True, text=True, check=True
    ).stdout
    assert "%ymm" in listing, "the AVX2 kernels are there (the check above is not vacuous)"


def test_the_flags_never_ask_for_the_compiling_cpu() -> None:
    for machine in ("x86_64", "AMD64", "arm64", "aarch64"):
        flags = install_llama_cpp.portable_cmake_args(machine)
        assert "-DGGML_NATIVE=OFF" in flags.split() and "march=native" not in flags
    x86 = install_llama_cpp.portable_cmake_args("x86_64").split()
    assert "-DGGML_AVX2=ON" in x86 and "-DGGML_AVX512=OFF" in x86 and "-DGGML_AMX_INT8=OFF" in x86


def test_the_version_is_pinned_and_the_cache_is_keyed_by_the_flags(tmp_path: Path, monkeypatch) -> None:
    assert install_llama_cpp.pinned_version() == "0.3.36"
    monkeypatch.setenv("LH_WHEEL_CACHE", str(tmp_path))
    a = install_llama_cpp.wheel_folder("0.3.36", "-DGGML_NATIVE=OFF")
    b = install_llama_cpp.wheel_folder("0.3.36", "-DGGML_NATIVE=OFF -DGGML_AVX512=ON")
    assert a != b and a.parent == tmp_path == b.parent
    ranged = tmp_path / "pyproject.toml"
    ranged.write_text(
        '[project]\nname = "x"\n[project.optional-dependencies]\nlocal = ["llama-cpp-python[server]>=0.3"]\n'
    )
    with pytest.raises(SystemExit, match="must pin"):
        install_llama_cpp.pinned_version(ranged)
