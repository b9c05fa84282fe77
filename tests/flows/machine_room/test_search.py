"""Search over real HTTP (issue 31 item 5; decision 0044): the derived index is built on the first
query, follows a new message, a rename, a merge, a graph deletion, a practice set and a lesson's
deletion, and is rebuilt when removed or of another schema."""

from __future__ import annotations

import random
import sqlite3
from typing import Any

from server.core.contracts.graph import Provenance, Verdicts
from server.core.contracts.practice import PracticeParams, Problem, ProblemSet
from server.core.library.graph import plan_merge
from tests.bench.common import extraction_job, run_line
from tests.bench.library.bench_graph_read import write_graph
from tests.flows.conftest import Live, sse_chunks, turn_body


def _search(live: Live, q: str, limit: int = 20) -> list[dict[str, Any]]:
    response = live.client.get("/api/search", params={"q": q, "limit": limit})
    assert response.status_code == 200, response.text
    results: list[dict[str, Any]] = response.json()["results"]
    return results


def _messages(live: Live, q: str) -> list[dict[str, Any]]:
    """The message results (a lesson's title may be renamed by the naming model meanwhile)."""
    return [h for h in _search(live, q) if h["kind"] == "message"]


def _turn(live: Live, chat_id: str, text: str, mid: str) -> None:
    response = live.client.post("/api/chat", json=turn_body(chat_id, text, mid))
    assert response.status_code == 200 and "[DONE]" in sse_chunks(response.text), response.text


def test_the_index_follows_lessons_graph_and_practice(live: Live) -> None:
    write_graph(live.data / "graph", 300)
    live.script.reply = lambda _: ["The slope of the ", "tangent line."]
    chat_id = live.new_chat()
    _turn(live, chat_id, "What is a derivative?", "u1")

    hits = _search(live, "tangent")
    assert [(h["kind"], h["id"]) for h in hits] == [("message", chat_id)]
    record = live.record(chat_id)
    reply_id = next(m["id"] for m in record["messages"] if m["role"] == "assistant")
    assert hits[0]["href"] == f"/chat/{chat_id}?m={reply_id}"
    assert {"text": "tangent", "match": True} in hits[0]["snippet"]
    hrefs = [h["href"] for h in _search(live, "deriv")]  # the last word is a prefix
    assert f"/chat/{chat_id}?m=u1" in hrefs

    # a new message is found by the next query
    live.script.reply = lambda _: ["Think of a ", "hyperbolic paraboloid."]
    _turn(live, chat_id, "And a saddle?", "u2")
    assert [h["kind"] for h in _search(live, "paraboloid")] == ["message"]

    # a rename: the lesson's title row (weighted above messages) leads
    assert live.client.patch(f"/api/chats/{chat_id}", json={"title": "Saddle surfaces"}).status_code == 200
    hits = _search(live, "saddle")
    assert hits[0]["kind"] == "lesson" and hits[0]["label"] == "Saddle surfaces"
    assert hits[0]["href"] == f"/chat/{chat_id}"

    # propositions: name, aliases, statement; a merge adds, a deletion removes
    hits = _search(live, "proposition 17 ")
    assert hits[0] == {
        "kind": "proposition",
        "id": "n_0000000000000011",
        "target": "n_0000000000000011",
        "label": "Proposition 17",
        "href": "/?node=n_0000000000000011",
        "snippet": hits[0]["snippet"],
    }
    store = live.services.stores.graph
    nodes, chains = store.nodes(), store.chains()
    findings = extraction_job(nodes, random.Random(5))
    prov = Provenance(source="src_job", job="job_1")
    plan = plan_merge(nodes, chains, findings, Verdicts(links=[]), prov, "t9", index=store.chain_index())
    store.commit_merge(
        plan, [], run_line("src_bench", "job_1", plan.added_nodes, plan.added_chains, 0, at="t9")
    )
    assert len(_search(live, "new claim", limit=100)) == 20  # the merged job's 20 propositions
    deleted = live.client.post("/api/graph/delete", json={"ids": ["n_0000000000000011"]})
    assert deleted.status_code == 200, deleted.text
    assert "n_0000000000000011" not in {h["id"] for h in _search(live, "proposition 17 ")}

    # a practice set: its title and problems
    problem_set = ProblemSet(
        id="ps_00000001",
        title="Heaps",
        created_at="t",
        updated_at="t",
        params=PracticeParams(),
        node_ids=[],
        propositions=[],
        chains=[],
        problems=[
            Problem(
                id="pb_1",
                index=0,
                chain_ids=[],
                title="Sift down",
                statement="Show sift-down is logarithmic.",
            )
        ],
    )
    live.services.stores.practice.save(problem_set)
    hits = _search(live, "logarithmic")
    assert [(h["kind"], h["href"]) for h in hits] == [("problem", "/practice/ps_00000001?problem=pb_1")]
    assert _search(live, "heaps")[0]["kind"] == "practice"

    # a deleted lesson leaves the results
    assert live.client.delete(f"/api/chats/{chat_id}").status_code == 204
    assert _search(live, "tangent") == []
    assert _search(live, "paraboloid") == []


def test_the_index_is_rebuilt_when_removed_or_of_another_schema(live: Live) -> None:
    write_graph(live.data / "graph", 100)
    live.script.reply = lambda _: ["Eigenvalues ", "scale eigenvectors."]
    chat_id = live.new_chat()
    _turn(live, chat_id, "What is an eigenvalue?", "u1")
    first = _messages(live, "eigen")
    assert len(first) == 2
    index = live.data / "search" / "index.sqlite"
    assert index.exists()

    live.services.stores.search.close()  # type: ignore[attr-defined]
    index.unlink()
    assert _messages(live, "eigen") == first
    assert _search(live, "proposition 42 ")[0]["id"] == "n_000000000000002a"

    live.services.stores.search.close()  # type: ignore[attr-defined]
    with sqlite3.connect(index) as db:
        db.execute("UPDATE meta SET value = '0' WHERE key = 'schema'")
    assert _messages(live, "eigen") == first
    with sqlite3.connect(index) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone() != ("0",)

    live.services.stores.search.close()  # type: ignore[attr-defined]
    index.write_bytes(b"not a database at all" * 100)
    assert _messages(live, "eigen") == first


def test_query_syntax_is_text_and_bad_queries_are_plain_400s(live: Live) -> None:
    chat_id = live.new_chat()
    live.script.reply = lambda _: ['Say "AND" or NEAR* (x) ', "-y: ^z"]
    _turn(live, chat_id, "syntax?", "u1")
    for q in ['"', "*", "AND", "NEAR(", "-y:", "^z", '" OR "', "NOT", "", "   "]:
        live.client.get("/api/search", params={"q": q}).raise_for_status()
    assert [h["kind"] for h in _search(live, '"AND" NEAR*')] == ["message"]
    too_long = live.client.get("/api/search", params={"q": "x" * 201})
    assert too_long.status_code == 400
    assert live.client.get("/api/search", params={"q": "x", "limit": 0}).status_code == 400
    assert live.client.get("/api/search").status_code == 400


def test_a_query_during_a_first_fill_answers_what_is_indexed_and_says_so(live: Live) -> None:
    chat_id = live.new_chat()
    live.script.reply = lambda _: ["Matrices ", "multiply."]
    _turn(live, chat_id, "Matrices?", "u1")
    assert _messages(live, "matrices")
    search = live.services.search
    with search._lock:  # a fill from empty holds the catch-up
        search.filling = True
        answer = live.client.get("/api/search", params={"q": "matrices"}).json()
        search.filling = False
    assert answer["complete"] is False and answer["results"]  # what was indexed before
    assert live.client.get("/api/search", params={"q": "matrices"}).json()["complete"] is True
