"""Issues 10 and 26 (item 7): schemathesis fuzzes every operation of `/openapi.json` in-process
(ASGI) with all its checks: no server error (but the documented 503 when the fuzzed settings
leave no model to run), every status, content type, header and body as declared, schema-valid
requests accepted, schema-violating ones refused, and a method a path does not offer answered
405 with `Allow`.

Each run draws a fresh seed and prints it (`LH_FUZZ_SEED=<seed>` replays a run exactly). Each
operation gets its explicit examples, schemathesis' coverage cases (boundary values, missing
fields, undeclared methods) and `FUZZ_EXAMPLES` generated cases, positive and negative; the
budget keeps the run to a few minutes on a loaded two-core machine. The app runs with a scripted
model (no model network), its data dir and the import root in tmp_path.

`GET /api/events` is left out: its stream never ends, so an in-process call of it only returns at
the client's timeout (30 s for one case). Its stream is pinned by `tests/flows/test_events.py`.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, settings
from hypothesis.errors import Unsatisfiable
from schemathesis.core.failures import FailureGroup, ServerError
from schemathesis.core.result import Ok
from schemathesis.generation import derive_operation_seed
from schemathesis.generation.hypothesis.builder import HypothesisTestConfig, HypothesisTestMode, create_test
from schemathesis.openapi.checks import RejectedPositiveData

from server.core.json_body import MAX_DEPTH, MAX_SAFE_INTEGER
from tests.flows.inprocess import scripted_app

HOST = {"host": "127.0.0.1:8765"}
SEED_ENV = "LH_FUZZ_SEED"
DOCUMENTED_503 = {
    "models_not_configured",
    "model_unreachable",
    "rate_limited",
    "quota_exhausted",
    "auth_refused",
    "model_not_found",
}
"""The only 5xx the API answers on purpose (declared as 503): the fuzzed settings may leave no
model to run."""
FUZZ_EXAMPLES = 40
"""Generated cases per operation (positive and negative mixed), besides examples and coverage."""
ENDLESS = ("/api/events",)
"""Streams that never end (an in-process call would wait for its timeout); tested elsewhere."""
SEMANTIC_RULES = {
    "POST /api/chat": "the turn checks what JSON Schema cannot state after the shape: the session "
    "exists, the last message is the learner's, which parts the composer sends (issue 26 item 1)",
    "POST /api/graph/import": "a well-formed path must also be an existing folder inside the import "
    "roots; otherwise every file is refused (400) or the folder is (403)",
    "POST /api/practice/sets": "the picked nodes must be in the graph now (400 when none is)",
    "GET /api/graph": "`since` goes with format=compact only, a rule across two parameters",
    "PUT /api/settings": "a slot's baseUrl must be a URL (pydantic's HttpUrl), and openai-compatible "
    "needs one: a rule across two fields",
    "PUT /api/chats/{chat_id}/settings": "as PUT /api/settings: the slot's baseUrl rules",
    "PUT /api/settings/roles": "as PUT /api/settings: each role's slot has the baseUrl rules",
    "POST /api/first-run/key-test": "as PUT /api/settings: the slot's baseUrl rules; and the key's "
    "printable-ASCII rule allows no trailing line break but the one a paste carries",
    "PUT /api/settings/research": "baseUrl must start with http:// or https:// (or be empty)",
    "PATCH /api/chats/{chat_id}": "a title must hold more than white space, and what counts as white "
    "space differs between Python's str.strip, ECMA and Rust regex, so no pattern states it alike "
    'in every reader (a fresh-clone CI seed sent {"title": "\\n"})',
    "POST /api/backup/check": "the archive must be a backup this app wrote (a zip with its manifest "
    "and every file it lists): any other bytes are refused, 400 archive_refused",
    "POST /api/backup/restore": "the token must be the one the last check answered (400 restore_unknown)",
}
"""Operations whose schema-valid requests may still be refused with 400 on purpose: the
`positive_data_acceptance` check does not apply to them (every other check does)."""


@pytest.mark.timeout(900)  # a few minutes on a loaded machine; the elapsed time is printed
def test_every_operation_answers_as_declared(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    seed = int(os.environ.get(SEED_ENV) or secrets.randbits(32))
    with capsys.disabled():
        print(f"\nschemathesis seed {seed} (replay: {SEED_ENV}={seed})")
    app = scripted_app(data_dir)
    schema = schemathesis.openapi.from_asgi("/openapi.json", app, headers=HOST)
    results = list(schema.get_all_operations())
    assert all(isinstance(result, Ok) for result in results), results
    everything = [result.ok() for result in results if isinstance(result, Ok)]
    assert any(op.path in ENDLESS for op in everything), "the stream is still published"
    operations = [op for op in everything if op.path not in ENDLESS]
    assert len(operations) >= 24, [op.label for op in operations]
    assert all(
        op.body
        for op in operations
        if op.method.upper() in ("POST", "PUT", "PATCH") and op.path not in ("/api/chats/{chat_id}/abort",)
    ), [op.label for op in operations if not op.body]
    assert set(SEMANTIC_RULES) <= {op.label for op in operations}, "an exempted operation is gone"

    failures: list[str] = []
    counts: dict[str, int] = {}
    started = time.monotonic()
    for operation in operations:

        def run(case: Any) -> None:
            label = case.operation.label
            counts[label] = counts.get(label, 0) + 1
            response = case.call(headers=HOST, timeout=30)
            try:
                case.validate_response(response, headers=HOST)
            except FailureGroup as group:
                for failure in group.exceptions:
                    if not _on_purpose(label, failure, response, case.body):
                        curl = case.as_curl_command(headers=HOST)
                        status = response.status_code
                        failures.append(
                            f"{label}: {failure.title} ({status})\n{failure.message}\n"
                            f"    {response.text[:300]}\n    {curl[:500]}"
                        )

        test = create_test(
            operation=operation,
            test_func=run,
            config=HypothesisTestConfig(
                project=schema.config,
                modes=[HypothesisTestMode.EXAMPLES, HypothesisTestMode.COVERAGE, HypothesisTestMode.FUZZING],
                settings=settings(
                    max_examples=FUZZ_EXAMPLES,
                    deadline=None,
                    database=None,
                    phases=[Phase.explicit, Phase.generate],
                    suppress_health_check=list(HealthCheck),
                ),
                seed=derive_operation_seed(seed, operation.label),
            ),
        )
        with contextlib.suppress(Unsatisfiable):  # no negative case for an operation without inputs
            test()
    elapsed = time.monotonic() - started
    with capsys.disabled():
        print(f"fuzzed {len(operations)} operations, {sum(counts.values())} requests in {elapsed:.1f} s")
    kinds = Counter(failure.split("\n", 1)[0] for failure in failures)
    summary = "\n".join(f"{n:5d} x {kind}" for kind, n in kinds.most_common())
    assert not failures, f"seed {seed} ({SEED_ENV}={seed} replays it):\n{summary}\n" + "\n".join(
        failures[:20]
    )
    assert all(counts.get(op.label, 0) > 0 for op in operations)
    # No time limit here (speed is for benchmarks): the elapsed time is printed above; the example
    # counts bound the run, and pytest-timeout stops a run that hangs.


def _on_purpose(label: str, failure: Any, response: Any, body: Any) -> bool:
    """Whether a check's failure is a refusal the API makes on purpose: a documented 503 (no
    model); a 400 for a schema-valid request of an operation in `SEMANTIC_RULES`; or a 400 for
    a body the strict JSON parser refuses whatever the operation (`server/core/json_body.py`:
    an integer beyond ±2^53, nesting deeper than 64, also inside properties the schema leaves
    open, which JSON Schema cannot bound for every value)."""
    if isinstance(failure, ServerError):
        return response.status_code == 503 and _error_code(response) in DOCUMENTED_503
    if not isinstance(failure, RejectedPositiveData) or response.status_code != 400:
        return False
    return label in SEMANTIC_RULES or _beyond_strict_json(body)


def _beyond_strict_json(body: Any) -> bool:
    """Whether a JSON value holds an integer beyond ±(2^53 - 1) or nests deeper than 64."""
    stack = [(body, 0)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_SAFE_INTEGER:
            return True
        if isinstance(value, dict | list):
            if depth + 1 > MAX_DEPTH:
                return True
            items = value.values() if isinstance(value, dict) else value
            stack.extend((item, depth + 1) for item in items)
    return False


def _error_code(response: Any) -> object:
    try:
        body = response.json()
    except ValueError:
        return None
    return body.get("error") if isinstance(body, dict) else None
