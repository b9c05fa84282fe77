"""Over HTTP: a practice note over 2,000 characters is accepted, trimmed and capped (seed §7,
issue 30 item 5), and the set and its agents get the capped note."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from server.core.contracts.practice import MAX_NOTE
from tests.flows.practice.test_practice import _live_practice, _until


def test_a_note_over_the_cap_is_kept_to_its_first_2000_characters(live: Any, tmp_path: Path) -> None:
    nodes, script = _live_practice(live, tmp_path)
    note = "\n  Make me face heap order. " + "Then sortedness, slowly. " * 400  # ~10,000 characters
    created = live.client.post("/api/practice/sets", json={"nodeIds": nodes, "note": note})
    assert created.status_code == 202, created.text
    kept = note.strip()[:MAX_NOTE].rstrip()
    set_id = created.json()["id"]
    ready = _until(
        lambda: (s := live.client.get(f"/api/practice/sets/{set_id}").json())["status"] == "ready" and s,
        "the set",
    )
    assert ready["note"] == kept and len(kept) == MAX_NOTE - 1  # the cut fell after a space: dropped
    assert any(prompt.rstrip().endswith(kept) for prompt in script.prompts)  # the partitioner's input
    assert not any(note.strip()[: MAX_NOTE + 40] in prompt for prompt in script.prompts)  # nothing past it
