"""The default import root is the learner's home folder (issue 10, defect 6): with
`$LH_IMPORT_ROOTS` unset (every other test sets it to tmp_path), a folder import may read inside
the home folder, plus what `library.importRoots` in settings.json adds, and nothing else."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from server.core.library.notes import folder_refusal
from server.services.library.folders import IMPORT_ROOTS_ENV, import_roots
from server.store.machine_room.settings import FileSettingsStore


def test_without_the_variable_the_home_folder_is_the_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(IMPORT_ROOTS_ENV, raising=False)
    home = tmp_path / "learner"
    (home / "notes").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.setenv("HOME", str(home))  # what Path.home() reads on POSIX
    monkeypatch.setenv("USERPROFILE", str(home))  # and on Windows
    settings = FileSettingsStore(tmp_path / "settings.json")

    roots = import_roots(settings)
    assert roots == [home.resolve()]
    assert folder_refusal((home / "notes").resolve(), roots) is None
    refused = folder_refusal((tmp_path / "elsewhere").resolve(), roots)
    assert refused is not None and "outside the folders notes may be imported from" in refused
    assert str(home.resolve()) in refused, "the refusal names the home folder"

    # settings add to the default, they do not replace it
    extra = tmp_path / "elsewhere"
    (tmp_path / "settings.json").write_text(json.dumps({"library": {"importRoots": [str(extra)]}}))
    assert import_roots(settings) == [home.resolve(), extra.resolve()]

    # an empty variable is no variable
    assert import_roots(settings, {IMPORT_ROOTS_ENV: "  "})[0] == home.resolve()
