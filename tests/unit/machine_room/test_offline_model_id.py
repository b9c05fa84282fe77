"""The page sends the offline model's id when the learner leaves its model field empty
(`OFFLINE_MODEL_ID` in frontend/src/core/machine_room/settings.ts); it must be the server's
`OFFLINE_MODEL`, or a slot saved that way would name a model nothing serves."""

from __future__ import annotations

import re
from pathlib import Path

from server.core.machine_room.model_slots import OFFLINE_MODEL

SETTINGS_TS = (
    Path(__file__).resolve().parents[3] / "frontend" / "src" / "core" / "machine_room" / "settings.ts"
)


def test_the_page_and_the_server_name_the_offline_model_alike() -> None:
    found = re.search(r"export const OFFLINE_MODEL_ID = '([^']+)';", SETTINGS_TS.read_text(encoding="utf-8"))
    assert found is not None, "OFFLINE_MODEL_ID is no longer declared in settings.ts"
    assert found.group(1) == OFFLINE_MODEL
