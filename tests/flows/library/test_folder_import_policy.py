"""Issue 10, defect 6: a folder import reads only folders the learner chose.

Inside the import roots (here `$LH_IMPORT_ROOTS` points at a fake home under tmp_path, never the
real one), no system folder, no link followed out of the chosen folder, hidden and system
directories skipped, a folder that cannot be read answered with a 4xx that says so, and the walk
off the event loop.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.flows.library.test_library import Library, library  # noqa: F401 - the fixture


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("LH_IMPORT_ROOTS", str(home))
    return home


def notes_folder(home: Path) -> Path:
    folder = home / "notes"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.md").write_text("# Alpha\n\nAlpha is first.\n")
    (folder / "sub" / "b.txt").write_text("Gamma\nDelta\n")
    return folder


def post(lib: Library, path: str) -> Any:
    return lib.client.post("/api/graph/import", json={"path": path})


def imported_names(response: Any) -> dict[str, str]:
    return {Path(f["name"]).name: f["status"] for f in response.json()["files"]}


def nothing_recorded(lib: Library) -> bool:
    return lib.ledger("sources") == [] and lib.ledger("nodes") == []


@pytest.mark.parametrize("path", ["/etc", "/usr/share", "/proc/self", "/"])
def test_system_folders_are_refused_with_the_reason(library: Library, home: Path, path: str) -> None:  # noqa: F811
    response = post(library, path)
    assert response.status_code == 403, response.text
    body = response.json()
    assert body["error"] == "folder_not_allowed" and body["files"] == []
    assert "system folder" in body["detail"] or "whole filesystem" in body["detail"], body
    assert nothing_recorded(library)


def test_a_dotdot_path_out_of_the_roots_is_refused(library: Library, home: Path, tmp_path: Path) -> None:  # noqa: F811
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("not yours\n")
    response = post(library, f"{home}/../outside")
    assert response.status_code == 403 and response.json()["error"] == "folder_not_allowed"
    assert "outside the folders" in response.json()["detail"] and "importRoots" in response.json()["detail"]
    etc = post(library, f"{home}/../../../../../../../../etc")
    assert etc.status_code == 403 and "system folder" in etc.json()["detail"]
    assert nothing_recorded(library)


def test_the_settings_allow_list_adds_a_root(library: Library, home: Path, tmp_path: Path) -> None:  # noqa: F811
    extra = tmp_path / "usb"
    extra.mkdir()
    (extra / "c.md").write_text("# Charlie\n\nCharlie is third.\n")
    assert post(library, str(extra)).status_code == 403
    settings = json.loads((library.data / "settings.json").read_text())
    settings["library"] = {"importRoots": [str(extra)]}
    (library.data / "settings.json").write_text(json.dumps(settings))
    response = post(library, str(extra))
    assert response.status_code == 202 and imported_names(response) == {"c.md": "queued"}


def test_links_out_of_the_folder_are_not_followed(library: Library, home: Path, tmp_path: Path) -> None:  # noqa: F811
    folder = notes_folder(home)
    (folder / "passwd.md").symlink_to("/etc/passwd")
    (folder / "etc").symlink_to("/etc", target_is_directory=True)
    outside = tmp_path / "outside.md"
    outside.write_text("outside the folder\n")
    (folder / "outside.md").symlink_to(outside)
    (folder / "inside.md").symlink_to(folder / "a.md")
    response = post(library, str(folder))
    assert response.status_code == 202, response.text
    files = {Path(f["name"]).name: f for f in response.json()["files"]}
    assert {n: f["status"] for n, f in files.items()} == {
        "a.md": "queued",
        "b.txt": "queued",
        "inside.md": "queued",
        "outside.md": "refused",
        "passwd.md": "refused",
        "etc": "refused",  # a linked folder is listed, not entered
    }
    assert "outside the chosen folder" in files["passwd.md"]["detail"]
    assert "links to folders are not followed" in files["etc"]["detail"]
    library.settle()
    sources = library.ledger("sources")
    assert not any("/etc" in (s.get("path") or "") for s in sources)
    text = "".join(p.read_text() for p in (library.data / "graph").glob("*.jsonl"))
    assert "root:x:0:0" not in text and "outside the folder" not in text


def test_hidden_and_system_directories_are_skipped(library: Library, home: Path) -> None:  # noqa: F811
    folder = notes_folder(home)
    for hidden in (".git", ".obsidian", "node_modules", "__pycache__"):
        (folder / hidden).mkdir()
        (folder / hidden / "x.md").write_text("# Hidden\n\nnot a note\n")
    (folder / ".draft.md").write_text("# Draft\n\nhidden file\n")
    response = post(library, str(folder))
    assert response.status_code == 202
    assert imported_names(response) == {"a.md": "queued", "b.txt": "queued"}


def test_a_named_pipe_is_refused_not_read(library: Library, home: Path) -> None:  # noqa: F811
    folder = notes_folder(home)
    os.mkfifo(folder / "pipe.md")
    response = post(library, str(folder))  # reading the pipe would block forever
    assert response.status_code == 202
    files = {Path(f["name"]).name: f for f in response.json()["files"]}
    assert files["pipe.md"]["status"] == "refused" and "regular file" in files["pipe.md"]["detail"]


def test_not_a_folder_is_a_400_that_says_so(library: Library, home: Path) -> None:  # noqa: F811
    folder = notes_folder(home)
    (home / "empty").mkdir()
    for path, words in (
        (str(home / "missing"), "not a folder"),
        (str(folder / "a.md"), "not a folder"),
        ("notes", "absolute"),
        (str(home / "empty"), "no .md"),
    ):
        response = post(library, path)
        assert response.status_code == 400, (path, response.text)
        assert words in response.json()["detail"], (path, response.json())


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any folder; permissions cannot be tested")
def test_an_unreadable_folder_is_a_403_that_says_so(library: Library, home: Path) -> None:  # noqa: F811
    folder = notes_folder(home)
    folder.chmod(0)
    try:
        response = post(library, str(folder))
    finally:
        folder.chmod(0o755)
    assert response.status_code == 403 and response.json()["error"] == "folder_unreadable"
    assert "permission" in response.json()["detail"].lower()


def test_the_walk_runs_off_the_event_loop(library: Library, home: Path) -> None:  # noqa: F811
    """The walk waits until /api/health has answered: on the event loop, health could not answer."""
    folder = notes_folder(home)
    service = library.services.library
    real = service.collect_folder
    health_answered = threading.Event()
    walk_started = threading.Event()

    def gated(path: str) -> Any:
        walk_started.set()
        assert health_answered.wait(10), "health could not answer while the walk ran"
        return real(path)

    service.collect_folder = gated  # type: ignore[method-assign]
    result: dict[str, Any] = {}
    poster = threading.Thread(target=lambda: result.setdefault("r", post(library, str(folder))))
    poster.start()
    assert walk_started.wait(10)
    assert library.client.get("/api/health", timeout=5).status_code == 200
    health_answered.set()
    poster.join(20)
    assert result["r"].status_code == 202
