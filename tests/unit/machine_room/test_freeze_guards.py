"""The frozen build's content guards (`build/freeze.py: verify_contents`, seed §8, issue 30 item 5):
the build hard-fails, naming the files, when the repository's data dir would leak into the bundle
(and deletes that bundle), or when a prompt the server loads falls out of it or differs.

Each bundle here is laid out as PyInstaller 6 lays one out (`_internal/` beside the executable)."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[3]


def _freeze() -> ModuleType:
    spec = importlib.util.spec_from_file_location("lh_build_freeze", ROOT / "build" / "freeze.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


freeze = _freeze()


@pytest.fixture
def repo(tmp_path: Path) -> dict[str, Path]:
    """A repository's data dir and prompts, and a clean bundle made from them."""
    data = tmp_path / "repo" / "data"
    (data / "chats").mkdir(parents=True)
    (data / "chats" / "c_1.json").write_text(
        '{"id": "c_1", "messages": ["I am learning heaps, slowly and with care"]}'
    )
    (data / "graph").mkdir()
    (data / "graph" / "nodes.jsonl").write_text(
        '{"id": "n_1", "name": "Heap order", "statement": "A parent <= its children"}\n'
    )
    (data / "settings.json").write_text("{}")  # too short to tell: a package's own `{}` is no leak
    (data / "empty.log").write_text("")
    source = tmp_path / "repo" / "server"
    prompts = source / "agent" / "prompts"
    prompts.mkdir(parents=True)
    for name in ("teacher", "prober"):
        (prompts / f"{name}.md").write_text(f"You are the {name}.\n")
    (source / "agent" / "lesson.py").write_text('x = load_prompt("teacher") + load_prompt( "prober" )\n')
    bundle = tmp_path / "dist" / "learning-harness-server"
    shutil.copytree(prompts, bundle / "_internal" / "server" / "agent" / "prompts")
    (bundle / "learning-harness-server").write_bytes(b"\x7fELF")
    (bundle / "_internal" / "trafilatura" / "data").mkdir(parents=True)  # a package's own data: fine
    (bundle / "_internal" / "trafilatura" / "data" / "settings.json").write_text("{}")
    return {"data": data, "source": source, "prompts": prompts, "bundle": bundle}


def verify(repo: dict[str, Path]) -> None:
    freeze.verify_contents(repo["bundle"], repo["data"], repo["prompts"], repo["source"])


def test_a_clean_bundle_passes_and_same_named_files_with_other_bytes_are_not_leaks(
    repo: dict[str, Path],
) -> None:
    (repo["bundle"] / "_internal" / "c_1.json").write_text('{"id": "c_1", "messages": []}')  # other bytes
    verify(repo)  # no exit
    assert freeze.leaked_data(repo["bundle"], repo["data"]) == []
    assert repo["bundle"].is_dir()


@pytest.mark.parametrize(
    "where",
    [
        "_internal/data/chats/c_1.json",  # a spec `datas` entry ("data/", "data")
        "data/graph/nodes.jsonl",  # beside the executable
        "_internal/server/static/c_1.json",  # a copy anywhere, by name and bytes
    ],
)
def test_a_file_of_the_repository_data_dir_in_the_bundle_fails_the_build_and_deletes_it(
    repo: dict[str, Path], where: str
) -> None:
    original = repo["data"] / ("graph/nodes.jsonl" if where.endswith("nodes.jsonl") else "chats/c_1.json")
    leaked = repo["bundle"] / where
    leaked.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(original, leaked)
    assert freeze.leaked_data(repo["bundle"], repo["data"]) == [where]
    with pytest.raises(SystemExit, match="data dir") as refused:
        verify(repo)
    assert where in str(refused.value) and "it was deleted" in str(refused.value)
    assert not repo["bundle"].exists()  # no copy of a learner's data is left in dist/


def test_a_top_level_data_folder_is_a_leak_even_when_the_repository_has_no_data(
    repo: dict[str, Path],
) -> None:
    shutil.rmtree(repo["data"])
    (repo["bundle"] / "_internal" / "data").mkdir()
    assert freeze.leaked_data(repo["bundle"], repo["data"]) == ["_internal/data/"]
    with pytest.raises(SystemExit, match="_internal/data/"):
        verify(repo)


def test_a_prompt_missing_from_the_bundle_or_different_fails_the_build(repo: dict[str, Path]) -> None:
    bundled = repo["bundle"] / "_internal" / "server" / "agent" / "prompts"
    (bundled / "prober.md").unlink()
    (bundled / "teacher.md").write_text("You are someone else.\n")
    with pytest.raises(SystemExit) as refused:
        verify(repo)
    text = str(refused.value)
    assert (
        "prober.md (not in the bundle)" in text and "teacher.md (differs from server/agent/prompts)" in text
    )
    assert repo["bundle"].is_dir()  # nothing private in it: kept for a look


def test_a_prompt_the_code_loads_but_the_repository_lacks_fails_the_build(repo: dict[str, Path]) -> None:
    (repo["source"] / "agent" / "namer.py").write_text("NAMER = load_prompt('namer')\n")
    assert freeze.prompt_names(repo["source"], repo["prompts"]) == ["namer", "prober", "teacher"]
    with pytest.raises(SystemExit, match=r"namer\.md \(no such file in server/agent/prompts\)"):
        verify(repo)


def test_the_repository_s_own_prompts_are_every_prompt_its_code_loads() -> None:
    """The real tree: each `load_prompt("<name>")` in server/ has its `<name>.md` (the guard's list
    is not empty, and a bundle of exactly server/agent/prompts passes it)."""
    names = freeze.prompt_names()
    assert {"teacher", "prober", "auditor", "extraction_core"} <= set(names)
    assert all((freeze.PROMPTS / f"{name}.md").is_file() for name in names)
