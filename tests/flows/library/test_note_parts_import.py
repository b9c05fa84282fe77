"""What reaches the model of a real vault's notes, over HTTP (issue 28, items 1 and 9).

An index note led by wiki links is imported (it was refused as "mostly JSON data"); a note's
Dataview script and 55 KB of TikZ source are skipped, the import's answer saying so in a plain
sentence, and the model never reads them; a code block the line cut would have split reaches the
model whole, in one part.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import server.services.library.jobs as extraction
from server.agent.library.extraction import windowed_prompt
from server.core.library.note_blocks import note_blocks
from tests.flows.library.test_library import Library, library  # noqa: F401 (the notes-import fixture)

CODE = ["```python", *(f"total_{i} = sum(range({i}))  # running total {i}" for i in range(40)), "```"]
TIKZ = (
    "```tikz\n\\begin{tikzpicture}\n"
    + "\\draw (0,0) -- (1,1) node {$x$};\n" * 1700
    + "\\end{tikzpicture}\n```"
)
NOTE = "\n".join(
    [
        "# Cosets",
        *(f"A left coset of H number {i} is the set gH for some g in G." for i in range(24)),
        "```dataviewjs",
        "dv.table(['note'], dv.pages('#group').map(p => [p.file.link]))",
        "```",
        TIKZ,
        *CODE,
        "Cosets partition the group.",
    ]
)


def test_an_index_note_is_read_and_plugin_code_skipped_and_said(
    library: Library,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (library.data / "settings.json").write_text(
        json.dumps(
            {
                **json.loads((library.data / "settings.json").read_text()),
                "graph": {"extractionChunkTokens": 500},
            }
        )
    )
    prompts: list[str] = []
    original = windowed_prompt  # what the jobs module calls

    def recorded(source_text: str, graph_so_far: str, window: Any) -> str:
        prompts.append(source_text)
        return original(source_text, graph_so_far, window)

    monkeypatch.setattr(extraction, "windowed_prompt", recorded)
    (tmp_path / "Groups.md").write_text(
        "# Groups\n[[Group]] is a set with an operation.\n[[Ring]] has two.\n"
    )
    (tmp_path / "Cosets.md").write_text(NOTE)
    assert len(TIKZ) > 55_000
    response = library.upload(tmp_path / "Groups.md", tmp_path / "Cosets.md")
    assert response.status_code == 202, response.text
    files = {f["name"]: f for f in response.json()["files"]}
    assert files["Groups.md"]["status"] == "queued", files["Groups.md"]
    cosets = files["Cosets.md"]
    assert cosets["status"] == "queued" and cosets["chunks"] == 2, cosets
    assert (
        cosets["detail"] == "Cosets.md: skipped DataviewJS scripts, TikZ drawing code; its prose is imported"
    )
    rows = library.settle()
    assert all(r["phase"] == "done" for r in rows), rows
    read = [p for p in prompts if "coset" in p.lower()]
    assert not any("dv.table" in p or "\\draw" in p for p in read)
    for prompt in read:
        assert all(b.closed for b in note_blocks(prompt.split("\n")) if b.kind == "code"), prompt
    assert sum("\n".join(CODE) in p for p in read) == 1  # the code block whole, in one part
    assert any("Group is a set with an operation." in p for p in prompts)
