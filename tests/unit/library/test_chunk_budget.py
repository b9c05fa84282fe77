"""The extraction's chunk budget follows the model that runs it (offline model: notes import).

A model with a known small context window (the offline SmolLM2, 4,096 tokens) gets chunks that
fit it after the extractor's instructions, its tool schema and the answer's room; keyed models
(window unknown, large) keep the configured budget (seed §6 budgets).
"""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from server.agent.library.extraction import SUBMIT_DESCRIPTION, extractor_overhead_tokens
from server.agent.prompts import load_prompt
from server.core.contracts.graph import Findings
from server.core.contracts.models import Settings
from server.core.library.coverage import DEFAULT_CHUNK_TOKENS, TOKEN_FLOOR, fitting_chunk_tokens
from server.core.library.notes import chunk_note
from server.core.tokens import estimate_tokens
from server.services.library.jobs import OFFLINE_MAX_TOKENS
from server.services.library.library import LibraryService
from server.services.machine_room.offline_model import CONTEXT_TOKENS, TOKENS_PER_ESTIMATE
from tests.fakes import FakeChatStore, FakeIntakeStore, FakeSettingsStore
from tests.shared import NOTES


def test_an_unknown_window_keeps_the_configured_budget() -> None:
    assert fitting_chunk_tokens(DEFAULT_CHUNK_TOKENS, None, 767, 1024) == DEFAULT_CHUNK_TOKENS
    assert fitting_chunk_tokens(700, None, 10_000, 10_000, 3.0) == 700


def test_the_offline_window_lowers_the_default_budget() -> None:
    budget = fitting_chunk_tokens(DEFAULT_CHUNK_TOKENS, 4096, 767, 1024, 2.0)
    assert budget == (4096 - 1024) // 2 - 767 == 769


def test_a_large_window_keeps_the_configured_budget() -> None:
    assert fitting_chunk_tokens(DEFAULT_CHUNK_TOKENS, 200_000, 767, 4096) == DEFAULT_CHUNK_TOKENS


def test_a_window_too_small_for_anything_gets_the_floor() -> None:
    assert fitting_chunk_tokens(DEFAULT_CHUNK_TOKENS, 1000, 767, 1024) == TOKEN_FLOOR


@given(
    configured=st.integers(TOKEN_FLOOR, 200_000),
    window=st.integers(1, 1_000_000),
    overhead=st.integers(0, 50_000),
    answer=st.integers(0, 50_000),
    ratio=st.floats(0.5, 8.0),
)
def test_the_budget_fits_the_window_or_is_the_floor(
    configured: int, window: int, overhead: int, answer: int, ratio: float
) -> None:
    budget = fitting_chunk_tokens(configured, window, overhead, answer, ratio)
    assert TOKEN_FLOOR <= budget <= configured
    if budget > TOKEN_FLOOR:  # a full chunk, the fixed part and the answer, in the model's tokens
        assert (budget + overhead) * ratio + answer <= window


def test_the_overhead_is_the_instructions_and_the_submit_schema_by_the_estimate() -> None:
    instructions = load_prompt("extraction_core") + "\n\n" + load_prompt("extraction_notes")
    schema = json.dumps(Findings.model_json_schema())
    assert extractor_overhead_tokens() >= estimate_tokens(instructions) + estimate_tokens(schema)
    assert extractor_overhead_tokens() <= estimate_tokens(instructions + schema + SUBMIT_DESCRIPTION) + 20


def test_the_library_budget_follows_the_extraction_model() -> None:
    settings = FakeSettingsStore(Settings())
    keyed = LibraryService(
        None,  # type: ignore[arg-type]
        None,  # type: ignore[arg-type]
        settings,
        chats=FakeChatStore(),
        intake=FakeIntakeStore(),
    )
    assert keyed.budget() == DEFAULT_CHUNK_TOKENS
    offline = LibraryService(
        None,  # type: ignore[arg-type]
        None,  # type: ignore[arg-type]
        settings,
        chats=FakeChatStore(),
        context_window=lambda: (CONTEXT_TOKENS, TOKENS_PER_ESTIMATE),
        intake=FakeIntakeStore(),
    )
    budget = offline.budget()
    assert TOKEN_FLOOR < budget < DEFAULT_CHUNK_TOKENS
    expected = fitting_chunk_tokens(
        DEFAULT_CHUNK_TOKENS,
        CONTEXT_TOKENS,
        extractor_overhead_tokens(),
        OFFLINE_MAX_TOKENS,
        TOKENS_PER_ESTIMATE,
    )
    assert budget == expected
    # the German analysis notes (one 5,410-token chunk before, 11,690 of SmolLM2's tokens in a
    # request) now come in chunks each within the budget
    text = (NOTES / "analysis-1-definitions.de.md").read_text(encoding="utf-8")
    assert len(chunk_note(text, DEFAULT_CHUNK_TOKENS)) == 1
    chunks = chunk_note(text, budget)
    assert len(chunks) > 1
    assert all(estimate_tokens(c.text) <= budget for c in chunks)
