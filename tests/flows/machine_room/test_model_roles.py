"""Per-role models over HTTP (issue 30 item 2, seed §7): every model-using role listed once in
`GET /api/settings` with its default, each overridable through `PUT /api/settings/roles`, and
each background job's usage row naming the model that really ran."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

from pydantic_ai.models.function import FunctionModel

from server.core.contracts.models import ROLE_NAMES, ResolvedModel
from tests.flows.conftest import Live
from tests.flows.graph_pipeline import Pipeline
from tests.scripts.practice import PracticeScript

URL = "http://127.0.0.1:9/v1"


def slot(model: str) -> dict[str, str]:
    return {"provider": "openai-compatible", "model": model, "baseUrl": URL}


def _until(check: Any, what: str, timeout_s: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def test_every_role_is_listed_once_with_its_default_and_what_it_runs(live: Live) -> None:
    status = live.client.get("/api/settings").json()
    roles = {r["role"]: r for r in status["modelRoles"]}
    assert [r["role"] for r in status["modelRoles"]] == list(ROLE_NAMES)
    assert roles["grader"]["default"] == "strong" and roles["grader"]["override"] is None
    assert roles["grader"]["runs"]["model"] == "scripted"  # the strong slot
    assert roles["naming"]["default"] == "cheap" and roles["naming"]["runs"]["model"] == "scripted"
    assert roles["teacher"]["default"] == "lesson" and roles["teacher"]["runs"] is None
    assert roles["visualCheck"]["runs"] is None and roles["visualCheck"]["problem"] is None  # optional
    assert all(r["label"] and r["does"] for r in status["modelRoles"])


def test_overrides_round_trip_and_the_other_sections_survive(live: Live) -> None:
    path = live.data / "settings.json"
    before = json.loads(path.read_text())
    body = {"grader": slot("grader-model"), "problemGenerator": slot("writer-model"), "naming": None}
    status = live.client.put("/api/settings/roles", json=body)
    assert status.status_code == 200, status.text
    roles = {r["role"]: r for r in status.json()["modelRoles"]}
    assert roles["grader"]["override"]["model"] == "grader-model"
    assert roles["grader"]["runs"]["model"] == "grader-model"
    assert roles["problemGenerator"]["runs"]["model"] == "writer-model"
    assert roles["partitioner"]["runs"]["model"] == "scripted"  # not overridden: the strong slot
    saved = json.loads(path.read_text())
    assert saved["models"]["strong"] == before["models"]["strong"]
    assert saved["roles"]["grader"]["model"] == "grader-model"
    # the slots' own PUT without `roles` keeps the overrides
    live.client.put("/api/settings", json={"models": before["models"]})
    assert json.loads(path.read_text())["roles"]["problemGenerator"]["model"] == "writer-model"


def test_a_bad_override_is_a_400_and_changes_nothing(live: Live) -> None:
    path = live.data / "settings.json"
    before = path.read_text()
    for body in (
        {"teachr": slot("x")},  # no such role
        {"grader": {"provider": "openai-compatible", "model": "x"}},  # no base URL
        {"grader": {"provider": "nobody", "model": "x"}},
    ):
        refused = live.client.put("/api/settings/roles", json=body)
        assert refused.status_code == 400, (body, refused.text)
        assert path.read_text() == before
    assert "teachr" in live.client.put("/api/settings/roles", json={"teachr": slot("x")}).json()["detail"]


def test_an_override_without_its_key_is_a_problem_naming_the_role(live: Live) -> None:
    status = live.client.put(
        "/api/settings/roles", json={"grader": {"provider": "openai", "model": "gpt-5-mini"}}
    ).json()
    grader = next(r for r in status["modelRoles"] if r["role"] == "grader")
    assert grader["runs"] is None
    assert grader["problem"].startswith("Grader override: no API key for openai")
    assert grader["problem"] in status["problems"]


def test_practice_rows_name_the_model_each_role_ran(live: Live, tmp_path: Path) -> None:
    """The real ModelService resolves each stage's role; the scripted practice model answers
    whatever model id it is built for, and each row's usage names the one that ran."""
    pipe = Pipeline(tmp_path / "graph")

    async def build() -> list[str]:
        await pipe.import_note("vault/heap.md", "# Binary heap\n# Heap order\n# Root is the minimum\n")
        return list(pipe.graph.nodes())

    nodes = asyncio.run(build())
    script = PracticeScript()
    built: list[str] = []

    def factory(resolved: ResolvedModel, key: str | None, url: str | None) -> FunctionModel:
        built.append(resolved.model)
        return FunctionModel(function=script)

    live.services.models.model_factory = factory
    live.services.practice.graph = pipe.graph
    live.client.put(
        "/api/settings/roles", json={"problemGenerator": slot("writer-model"), "grader": slot("grader-model")}
    )
    set_id = live.client.post("/api/practice/sets", json={"nodeIds": nodes}).json()["id"]
    _until(lambda: live.client.get(f"/api/practice/sets/{set_id}").json()["status"] == "ready", "ready")
    answered = live.client.post(
        f"/api/practice/sets/{set_id}/answers", json={"problemId": "p1", "answer": "Heap."}
    )
    assert answered.status_code == 202, answered.text

    def rows() -> dict[str, dict[str, Any]]:
        return {r["id"]: r for r in live.client.get("/api/activity").json()["rows"]}

    _until(lambda: rows().get(f"{set_id}:grade:p1", {}).get("phase") == "done", "the grade")
    seen = rows()
    assert seen[f"{set_id}:partition"]["usage"]["model"] == "scripted"  # the strong slot
    generators = [r for k, r in seen.items() if k.startswith(f"{set_id}:gen:")]
    assert generators and {r["usage"]["model"] for r in generators} == {"writer-model"}
    assert seen[f"{set_id}:grade:p1"]["usage"]["model"] == "grader-model"
    assert {"scripted", "writer-model", "grader-model"} <= set(built)


def test_an_extraction_row_names_the_model_its_role_ran(live: Live, tmp_path: Path) -> None:
    pipe = Pipeline(tmp_path / "graph")
    models = live.services.models
    models.model_factory = lambda resolved, key, url: FunctionModel(function=pipe.script.model)
    live.client.put("/api/settings/roles", json={"extraction": slot("graph-model")})
    pipe.extraction.model_for = lambda: models.model_for_role("extraction")
    asyncio.run(pipe.import_note("vault/heap.md", "# Binary heap\n# Heap order\n"))
    [row] = [r for r in pipe.extraction.activity() if r["kind"] != "import"]
    assert row["phase"] == "done" and row["usage"]["model"] == "graph-model"
    assert models.context_window("extraction") is None  # a keyed model's window is not capped
