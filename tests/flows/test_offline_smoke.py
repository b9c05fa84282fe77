"""One real turn against the offline model through llama.cpp (slow; CI runs it).

Fresh data dir, no key: the strong slot resolves to SmolLM2-135M-Instruct served by
llama-cpp-python's OpenAI-compatible server. The content is weak; the path must be whole.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from server.services.offline_model import offline_installed
from tests.flows.conftest import sse_chunks
from tests.procs import start_server

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not offline_installed(), reason="the 'local' extra is not installed"),
]


def test_a_real_turn_streams_from_the_offline_model_and_persists(data_dir: Path) -> None:
    server = start_server(data_dir)
    try:
        with httpx.Client(base_url=server.url, timeout=300) as client:
            created = client.post("/api/chats", json={}).json()
            assert created["model"] == {
                "provider": "local",
                "model": "SmolLM2-135M-Instruct",
                "baseUrl": None,
            }
            body = {
                "id": created["id"],
                "messages": [
                    {
                        "id": "u1",
                        "role": "user",
                        "parts": [
                            {"type": "text", "text": "What is a prime number? Answer in one sentence."}
                        ],
                    }
                ],
            }
            response = client.post("/api/chat", json=body)
            assert response.status_code == 200, response.text
            chunks = sse_chunks(response.text)
            deltas = "".join(
                c.get("delta", "") for c in chunks if isinstance(c, dict) and c["type"] == "text-delta"
            )
            assert deltas.strip(), "the offline model streamed no text"
            assert chunks[-1] == "[DONE]"
            record = client.get(f"/api/chats/{created['id']}").json()
            assert [m["role"] for m in record["messages"]] == ["user", "assistant"]
            assert record["messages"][1]["parts"][-1]["text"] == deltas
            assert client.get("/api/settings").json()["offline"]["running"] is True
    finally:
        assert server.stop() == 0
