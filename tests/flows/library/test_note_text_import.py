"""Notes read as notes over HTTP (issue 16, item 4): a drawing is refused per file, a note's blobs
are skipped with a reason beside its queued result, and the model reads the cleaned prose."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import server.services.library.jobs as extraction
from tests.flows.library.test_library import Library, library  # noqa: F401 (the notes-import fixture)

DRAWING = """---
excalidraw-plugin: parsed
tags: [excalidraw]
---
# Excalidraw Data
## Text Elements
Mitochondria ^a1b2c3
%%
## Drawing
```json
{"type": "excalidraw", "elements": [{"strokeWidth": 1}]}
```
%%
"""

BLOB = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg" * 4

NOTE = (
    "---\ntitle: Cells\ntags: [bio]\n---\n\\#Definition\n\n"
    "A [[cell|cell]] is the unit of life.   \n\n\n\n"
    "| term      | meaning        |\n|-----------|----------------|\n"
    f"| ATP       | energy         |\n\n{BLOB}\n"
)


def test_a_drawing_is_refused_and_a_notes_blobs_are_skipped(
    library: Library,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    prompts: list[str] = []
    original = extraction.windowed_prompt

    def recorded(source_text: str, graph_so_far: str, window: Any) -> str:
        prompts.append(source_text)
        return original(source_text, graph_so_far, window)

    monkeypatch.setattr(extraction, "windowed_prompt", recorded)
    (tmp_path / "drawing.excalidraw.md").write_text(DRAWING)
    (tmp_path / "cells.md").write_text(NOTE)
    response = library.upload(tmp_path / "drawing.excalidraw.md", tmp_path / "cells.md")
    assert response.status_code == 202
    files = {f["name"]: f for f in response.json()["files"]}
    drawing, cells = files["drawing.excalidraw.md"], files["cells.md"]
    assert drawing["status"] == "refused" and drawing["sourceId"] is None
    assert "an Excalidraw drawing" in drawing["detail"]
    assert cells["status"] == "queued" and cells["chunks"] == 1
    assert cells["detail"] == "cells.md: skipped base64 data; its prose is imported"
    library.settle()
    assert prompts == [
        "#Definition\n\nA cell is the unit of life.\n\n| term | meaning |\n|---|---|\n| ATP | energy |\n"
    ]
    assert {s["title"] for s in library.ledger("sources")} == {"cells.md"}  # the drawing wrote nothing


def test_a_vault_of_drawings_only_is_refused(library: Library, tmp_path: Path) -> None:  # noqa: F811
    (tmp_path / "a.md").write_text(DRAWING)
    (tmp_path / "b.md").write_text('{"elements": []}')
    response = library.upload(tmp_path / "a.md", tmp_path / "b.md")
    assert response.status_code == 400
    body = response.json()
    assert [f["status"] for f in body["files"]] == ["refused", "refused"]
    assert "Excalidraw" in body["detail"] and "JSON" in body["detail"]


def test_a_note_imported_before_preparation_existed_is_still_unchanged(
    library: Library,  # noqa: F811
    tmp_path: Path,
) -> None:
    """A source an older version stamped with the raw file's fingerprint is not re-extracted
    because preparation now trims its padding (an upgrade costs no model calls)."""
    from server.core.contracts.graph import SourceLine
    from server.core.library.notes import content_fingerprint, decode_note, source_id

    padded = "# Cells\n\nA cell is the unit of life.   \n\n\n\nATP carries energy.\n"
    (tmp_path / "old.md").write_text(padded)
    raw = decode_note("old.md", padded.encode())
    library.services.stores.graph.record_source(
        SourceLine(
            id=source_id("old.md"),
            kind="notes",
            title="old.md",
            path="old.md",
            fingerprint=content_fingerprint(raw),
            at="2026-11-01T00:00:00Z",
        )
    )
    response = library.upload(tmp_path / "old.md")
    [result] = response.json()["files"]
    assert result["status"] == "unchanged", result
