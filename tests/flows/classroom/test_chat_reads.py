"""`GET /api/chats` and `GET /api/chats/{id}` from the store's index and stored bytes (issue 15):
the same JSON the routes answered when they re-read and re-serialized every record."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest

from server.api.routes.classroom.chats import with_fields
from server.core.contracts.chat import ChatRecord, summarize
from server.store.atomic import write_json_atomic
from server.store.classroom.chats import compact_json, read_record_data
from tests.flows.conftest import Live, turn_body


def before(live: Live, chat_id: str) -> dict[str, Any]:
    """What `GET /api/chats/{id}` answered before issue 15: the record re-serialized by pydantic."""
    record = live.services.chats.chats.get(chat_id)
    assert record is not None
    out = record.model_dump(by_alias=True)
    out["running"] = live.services.registry.running(chat_id)
    out["lastFailure"] = live.services.turns.failures.get(chat_id)
    return json.loads(json.dumps(out))


def list_before(live: Live) -> list[dict[str, Any]]:
    rows = [
        summarize(r, running=live.services.registry.running(r.id)) for r in live.services.chats.chats.list()
    ]
    rows.sort(key=lambda r: r.updated_at, reverse=True)
    return json.loads(json.dumps([row.model_dump(by_alias=True) for row in rows]))


def test_a_record_answers_the_same_json_as_before(live: Live) -> None:
    chat_id = live.new_chat()
    assert live.client.post("/api/chat", json=turn_body(chat_id)).status_code == 200
    response = live.client.get(f"/api/chats/{chat_id}")
    assert response.status_code == 200 and response.headers["content-type"] == "application/json"
    assert response.json() == before(live, chat_id)
    assert response.json()["running"] is False and response.json()["lastFailure"] is None
    # the record as stored (snapshot + log, decision 0015) is answered with the live fields
    # spliced in: its compact bytes, serialized once per stored state
    stored = compact_json(ChatRecord.model_validate(read_record_data(live.data / "chats", chat_id)))
    assert response.content.startswith(stored.rstrip()[:-1])

    live.services.turns.failures[chat_id] = {"detail": "the model said no", "at": "2026-01-01T00:00:00.000Z"}
    assert live.services.registry.begin(chat_id) is not None
    try:
        answered = live.client.get(f"/api/chats/{chat_id}").json()
        assert answered == before(live, chat_id)
        assert answered["running"] is True and answered["lastFailure"]["detail"] == "the model said no"
    finally:
        live.services.registry.end(chat_id)
        live.services.turns.failures.pop(chat_id, None)


def test_a_file_an_older_build_wrote_answers_the_same_json_as_before(live: Live) -> None:
    """Pretty JSON without `usage`: read back unchanged, answered as `get` sees it."""
    chat_id = live.new_chat()
    path = live.data / "chats" / f"{chat_id}.json"
    data = json.loads(path.read_text())
    del data["usage"]
    data["messages"] = [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Older"}]}]
    write_json_atomic(path, data)
    answered = live.client.get(f"/api/chats/{chat_id}").json()
    assert answered == before(live, chat_id) and answered["usage"] == []
    assert json.loads(path.read_text()) == data  # a read never rewrites the file


def test_a_torn_record_answers_503_naming_the_file_and_is_left_alone(live: Live) -> None:
    chat_id = live.new_chat()
    assert live.client.get(f"/api/chats/{chat_id}").status_code == 200  # cached
    path = live.data / "chats" / f"{chat_id}.json"
    torn = path.read_bytes()[:30]
    path.write_bytes(torn)
    response = live.client.get(f"/api/chats/{chat_id}")
    assert response.status_code == 503
    assert response.json()["error"] == "store_corrupt" and f"{chat_id}.json" in response.json()["detail"]
    assert path.read_bytes() == torn
    assert chat_id not in [row["id"] for row in live.client.get("/api/chats").json()["chats"]]
    assert live.client.get("/api/chats/c_nope").status_code == 404


def test_the_session_list_answers_the_same_json_as_before(live: Live) -> None:
    ids = [live.new_chat() for _ in range(3)]
    assert live.client.post("/api/chat", json=turn_body(ids[1], "Limits")).status_code == 200
    assert live.client.patch(f"/api/chats/{ids[2]}", json={"title": "Renamed"}).status_code == 200
    assert live.client.delete(f"/api/chats/{ids[0]}").status_code == 204
    assert live.services.registry.begin(ids[2]) is not None
    try:
        listed = live.client.get("/api/chats").json()["chats"]
        assert listed == list_before(live)
        assert [row["id"] for row in listed] == [ids[2], ids[1]]
        assert listed[0]["running"] is True and listed[1]["messageCount"] == 2
    finally:
        live.services.registry.end(ids[2])


def test_the_session_list_body_is_encoded_once_per_change(live: Live) -> None:
    """`GET /api/chats` reuses its encoded body while the rows and the running turns are the same
    (issue 15), and follows a save, a running turn and a new session at once."""
    ids = [live.new_chat() for _ in range(2)]
    chats = live.services.chats
    first = chats.list_json()
    assert chats.list_json() is first  # nothing changed: the same bytes, not encoded again
    assert orjson.loads(first)["chats"] == list_before(live)
    assert live.services.registry.begin(ids[0]) is not None
    try:
        running = chats.list_json()
        assert running is not first and orjson.loads(running)["chats"] == list_before(live)
        assert [row["running"] for row in orjson.loads(running)["chats"]] == [False, True]
    finally:
        live.services.registry.end(ids[0])
    assert live.client.patch(f"/api/chats/{ids[0]}", json={"title": "Renamed"}).status_code == 200
    renamed = live.client.get("/api/chats").json()["chats"]
    assert renamed == list_before(live) and renamed[0]["title"] == "Renamed"
    third = live.new_chat()
    listed = live.client.get("/api/chats").json()["chats"]
    assert listed == list_before(live) and {row["id"] for row in listed} == {third, *ids}


def test_openapi_describes_the_record_route(live: Live) -> None:
    spec = live.client.get("/openapi.json").json()
    schema = spec["paths"]["/api/chats/{chat_id}"]["get"]["responses"]["200"]["content"]["application/json"][
        "schema"
    ]
    assert schema["type"] == "object"
    assert {"id", "messages", "usage", "running", "lastFailure"} <= set(schema["properties"])


@pytest.mark.parametrize(
    ("body", "fields", "expected"),
    [
        (b'{"id":"c"}', {"running": False}, {"id": "c", "running": False}),
        (
            b'{\n  "id": "c"\n}\n',
            {"running": True, "lastFailure": None},
            {"id": "c", "running": True, "lastFailure": None},
        ),
        (b"{}", {"running": False}, {"running": False}),
        (b'{"running":"stored"}', {"running": True}, {"running": True}),  # the live field wins
    ],
)
def test_with_fields_splices_members_into_an_object(body: bytes, fields: dict, expected: dict) -> None:
    assert orjson.loads(with_fields(body, fields)) == expected
    assert json.loads(with_fields(body, fields)) == expected


def test_with_fields_refuses_what_is_not_an_object() -> None:
    with pytest.raises(ValueError):
        with_fields(b"[1]", {"running": False})
