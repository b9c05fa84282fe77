"""The local model servers' port table and model lists (issue 29 item 2), pure."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.core.machine_room.local_servers import (
    LOCAL_SERVERS,
    MAX_MODEL_ID,
    MAX_MODELS,
    models_of,
    ports_from,
    ports_in,
)
from tests.fakes.local_model_servers import ANSWERS


def test_the_table_is_the_usual_ports_in_order() -> None:
    assert [(s.name, s.port) for s in LOCAL_SERVERS] == [
        ("Ollama", 11434),
        ("LM Studio", 1234),
        ("llama.cpp server", 8080),
        ("vLLM", 8000),
        ("Jan", 1337),
    ]
    assert LOCAL_SERVERS[0].base_url == "http://127.0.0.1:11434/v1"
    assert LOCAL_SERVERS[0].models_url == "http://127.0.0.1:11434/v1/models"


def test_ports_are_overridden_and_zero_leaves_a_product_out() -> None:
    servers = ports_from(" ollama=41434, JAN=0 ,,vllm=18000")
    assert [(s.key, s.port) for s in servers] == [
        ("ollama", 41434),
        ("lmstudio", 1234),
        ("llamacpp", 8080),
        ("vllm", 18000),
    ]
    assert ports_from(None) == LOCAL_SERVERS == ports_from("  ") == ports_in({})


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("ollama", "is not product=port"),
        ("=5", "is not product=port"),
        ("koboldcpp=5001", "is not one of ollama, lmstudio, llamacpp, vllm, jan"),
        ("ollama=1,ollama=2", "named twice"),
        ("ollama=65536", "whole number from 0 to 65535"),
        ("ollama=-1", "whole number from 0 to 65535"),
        ("ollama=١٢", "whole number from 0 to 65535"),  # Arabic-Indic digits are digits to str.isdigit
        ("ollama=", "whole number from 0 to 65535"),
    ],
)
def test_a_bad_port_list_is_refused_naming_what_is_wrong(value: str, says: str) -> None:
    with pytest.raises(ValueError, match="LH_LOCAL_SERVER_PORTS") as raised:
        ports_from(value)
    assert says in str(raised.value)


@given(st.dictionaries(st.sampled_from([s.key for s in LOCAL_SERVERS]), st.integers(0, 65535)))
def test_any_well_formed_list_gives_those_ports_in_table_order(chosen: dict[str, int]) -> None:
    servers = ports_from(",".join(f"{k}={v}" for k, v in chosen.items()))
    expected = [(s.key, chosen.get(s.key, s.port)) for s in LOCAL_SERVERS if chosen.get(s.key, s.port) != 0]
    assert [(s.key, s.port) for s in servers] == expected


@pytest.mark.parametrize("product", sorted(ANSWERS))
def test_each_products_own_answer_is_read(product: str) -> None:
    assert models_of(ANSWERS[product](["a:1", "b/c-GGUF"])) == ["a:1", "b/c-GGUF"]
    assert models_of(ANSWERS[product]([])) == []


@pytest.mark.parametrize(
    "body",
    [None, [], "models", {"object": "list"}, {"data": {"id": "x"}}, {"models": [{"name": "x"}]}],
)
def test_an_answer_of_another_shape_is_no_model_server(body: object) -> None:
    assert models_of(body) is None


@given(st.lists(st.one_of(st.text(max_size=250), st.integers(), st.none())))
def test_ids_are_kept_once_trimmed_bounded_in_order(ids: list[object]) -> None:
    body = {"data": [{"id": i} for i in ids] + ["junk", {"name": "no id"}]}
    kept = models_of(body)
    assert kept is not None
    assert len(kept) <= MAX_MODELS and len(set(kept)) == len(kept)
    assert all(m == m.strip() and 0 < len(m) <= MAX_MODEL_ID for m in kept)
    wanted: list[str] = []
    for i in ids:
        if isinstance(i, str) and i.strip() and len(i.strip()) <= MAX_MODEL_ID and i.strip() not in wanted:
            wanted.append(i.strip())
    assert kept == wanted[:MAX_MODELS]
