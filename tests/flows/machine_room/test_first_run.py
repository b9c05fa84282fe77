"""The first screen's ways to a real teacher over HTTP (issue 29 item 2).

Model servers on this machine: loopback fakes of Ollama, LM Studio, llama.cpp's server, vLLM and Jan
(`tests/fakes/local_model_servers.py`, each answering `/v1/models` as that product does) on free
ports named by `LH_LOCAL_SERVER_PORTS`, read by the real wiring; a server found is chosen and a
lesson runs on it (the scripted OpenAI-compatible stub standing in as Ollama). A pasted key: one
test call through the real engine to a keyed fake, saying "works" or why not in plain words, the
key never echoed, nothing stored.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest
from pydantic_ai import models

from server.agent.machine_room.first_call import OPENROUTER_NAME
from server.api.app import create_app
from server.config import DataPaths
from server.services.bootstrap import build_services
from server.services.machine_room.first_run import FirstRunService
from server.services.machine_room.models import default_model_factory
from tests.fakes import FakeSecrets
from tests.fakes.local_model_servers import keyed_app, other_app, product_app
from tests.flows.conftest import sse_chunks, turn_body
from tests.livehttp import serve
from tests.stub_openai import create_stub

KEY = "sk-first-run-TEST-KEY-0123456789"
MODELS = {
    "ollama": ["llama3.1:8b", "qwen2.5:7b"],
    "lmstudio": ["lmstudio-community/gemma-2-9b-it-GGUF"],
    "llamacpp": ["SmolLM2-1.7B-Instruct-Q4_K_M.gguf"],
    "vllm": ["meta-llama/Llama-3.1-8B-Instruct"],
    "jan": ["llama3.2-3b-instruct", "mistral-ins-7b-q4"],
}


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


def _app_client(data_dir: Path, stack: ExitStack) -> httpx.Client:
    services = build_services(
        DataPaths(data_dir),
        offline=False,
        secrets=FakeSecrets(),  # type: ignore[arg-type]
        model_factory=default_model_factory,
    )
    url = stack.enter_context(serve(create_app(services)))
    return stack.enter_context(httpx.Client(base_url=url, timeout=60))


@pytest.fixture
def allow_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(models, "ALLOW_MODEL_REQUESTS", True)  # its only peers: fakes on loopback


def test_each_product_found_on_its_port_with_its_models(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with ExitStack() as stack:
        ports = {
            name: _port(stack.enter_context(serve(product_app(name, ids)))) for name, ids in MODELS.items()
        }
        monkeypatch.setenv("LH_LOCAL_SERVER_PORTS", ",".join(f"{k}={v}" for k, v in ports.items()))
        client = _app_client(data_dir, stack)
        answer = client.get("/api/first-run/local-servers")
        assert answer.status_code == 200, answer.text
        found = answer.json()["servers"]
        assert [s["key"] for s in found] == ["ollama", "lmstudio", "llamacpp", "vllm", "jan"]
        for server in found:
            assert server["models"] == MODELS[server["key"]]
            assert server["baseUrl"] == f"http://127.0.0.1:{ports[server['key']]}/v1"
        names = {s["key"]: s["name"] for s in found}
        assert names == {
            "ollama": "Ollama",
            "lmstudio": "LM Studio",
            "llamacpp": "llama.cpp server",
            "vllm": "vLLM",
            "jan": "Jan",
        }
        assert [a["port"] for a in answer.json()["asked"]] == list(ports.values())


def test_closed_ports_and_other_programs_are_left_out_an_empty_server_is_listed(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with ExitStack() as stack:
        empty = _port(stack.enter_context(serve(product_app("ollama", []))))
        web = _port(stack.enter_context(serve(other_app())))
        jan = _port(stack.enter_context(serve(product_app("jan", MODELS["jan"]))))
        env = f"ollama={empty},lmstudio={_closed_port()},llamacpp={web},vllm=0,jan={jan}"
        monkeypatch.setenv("LH_LOCAL_SERVER_PORTS", env)
        client = _app_client(data_dir, stack)
        answer = client.get("/api/first-run/local-servers").json()
        assert [(s["key"], s["models"]) for s in answer["servers"]] == [
            ("ollama", []),
            ("jan", MODELS["jan"]),
        ]
        assert [a["key"] for a in answer["asked"]] == [
            "ollama",
            "lmstudio",
            "llamacpp",
            "jan",
        ]  # vllm=0: not asked


def test_a_server_found_becomes_the_teacher_and_a_lesson_runs_on_it(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, allow_requests: None
) -> None:
    with ExitStack() as stack:
        stub = stack.enter_context(serve(create_stub()))  # lists one model, "scripted"
        monkeypatch.setenv(
            "LH_LOCAL_SERVER_PORTS", f"ollama={_port(stub)},lmstudio=0,llamacpp=0,vllm=0,jan=0"
        )
        client = _app_client(data_dir, stack)
        assert client.post("/api/chats", json={}).status_code != 201, "no teacher yet"
        [server] = client.get("/api/first-run/local-servers").json()["servers"]
        slot = {"provider": "openai-compatible", "model": server["models"][0], "baseUrl": server["baseUrl"]}
        status = client.put("/api/settings", json={"models": {"strong": slot, "cheap": slot, "vision": None}})
        assert status.status_code == 200, status.text
        assert status.json()["resolved"]["strong"]["offline"] is False
        created = client.post("/api/chats", json={})
        assert created.status_code == 201, created.text
        turn = client.post("/api/chat", json=turn_body(created.json()["id"], "What is a derivative?"))
        assert turn.status_code == 200, turn.text
        text = "".join(c.get("delta", "") for c in sse_chunks(turn.text) if isinstance(c, dict))
        assert "derivative of $x^2$ is $2x$" in text


@pytest.fixture
def keyed(data_dir: Path, allow_requests: None) -> Iterator[tuple[httpx.Client, str]]:
    with ExitStack() as stack:
        api = stack.enter_context(serve(keyed_app(KEY, ["gpt-4o-mini", "anthropic/claude-sonnet-4"])))
        services = build_services(
            DataPaths(data_dir),
            offline=False,
            secrets=FakeSecrets(),  # type: ignore[arg-type]
            model_factory=default_model_factory,
        )
        bases = {"openai": f"{api}/v1", "openrouter": f"{api}/v1"}
        services.first_run = FirstRunService(provider_bases=bases)
        url = stack.enter_context(serve(create_app(services)))
        yield stack.enter_context(httpx.Client(base_url=url, timeout=60)), api


def _test(
    client: httpx.Client, key: str, provider: str, model: str, base_url: str | None = None
) -> httpx.Response:
    slot: dict[str, str] = {"provider": provider, "model": model}
    if base_url:
        slot["baseUrl"] = base_url
    return client.post("/api/first-run/key-test", json={"key": key, "slot": slot})


def test_a_working_key_says_works_and_stores_nothing(keyed: tuple[httpx.Client, str]) -> None:
    client, api = keyed
    for provider, model in (("openai", "gpt-4o-mini"), ("openrouter", "anthropic/claude-sonnet-4")):
        answer = _test(client, KEY + "\n", provider, model)
        assert answer.status_code == 200, answer.text
        assert answer.json() == {"works": True, "detail": f"Works: {model} answered."}
    compatible = _test(client, KEY, "openai-compatible", "gpt-4o-mini", f"{api}/v1").json()
    assert compatible["works"] is True
    keys = client.get("/api/settings").json()["keys"]
    assert not keys["openai"]["set"] and not keys["openrouter"]["set"], "a test stores no key"


def test_a_refused_key_an_unknown_model_and_no_server_say_why_in_plain_words(
    keyed: tuple[httpx.Client, str],
) -> None:
    client, _ = keyed
    wrong = "sk-WRONG-key-9876543210"
    refused = _test(client, wrong, "openai", "gpt-4o-mini").json()
    assert refused["works"] is False
    assert "key" in refused["detail"].lower() and "refused" in refused["detail"].lower(), refused
    assert wrong not in refused["detail"] and "Incorrect API key" not in refused["detail"]

    unknown = _test(client, KEY, "openai", "gpt-nonexistent").json()
    assert unknown["works"] is False
    assert "gpt-nonexistent" in unknown["detail"] and "does not exist" not in unknown["detail"], unknown

    unnamed = _test(client, KEY, "openrouter", "claude").json()
    assert unnamed == {"works": False, "detail": OPENROUTER_NAME}

    gone = f"http://127.0.0.1:{_closed_port()}/v1"
    closed = _test(client, KEY, "openai-compatible", "gpt-4o-mini", gone).json()
    assert closed["works"] is False
    assert "connect" in closed["detail"].lower(), closed


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"key": "sk-has space-0123", "slot": {"provider": "openai", "model": "m"}}, "spaces"),
        ({"key": "short", "slot": {"provider": "openai", "model": "m"}}, "key"),
        ({"key": KEY, "slot": {"provider": "chatgpt", "model": "m"}}, "provider"),
        ({"key": KEY, "slot": {"provider": "openai-compatible", "model": "m"}}, "baseUrl"),
        ({"key": KEY}, "slot"),
    ],
)
def test_a_malformed_test_is_refused_in_words(
    keyed: tuple[httpx.Client, str], body: dict[str, object], says: str
) -> None:
    client, _ = keyed
    answer = client.post("/api/first-run/key-test", json=body)
    assert answer.status_code == 400, answer.text
    assert says in answer.json()["detail"], answer.json()
