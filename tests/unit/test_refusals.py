"""The one refusal type (issue 27, item 2): kinds in the core, statuses only in the API layer."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.api.errors import STATUS_OF, refused
from server.core.refusals import REFUSAL_KINDS, Refused


def test_every_kind_has_exactly_one_status_and_statuses_are_distinct() -> None:
    assert set(STATUS_OF) == set(REFUSAL_KINDS)
    assert len(set(STATUS_OF.values())) == len(REFUSAL_KINDS)
    assert all(400 <= status < 600 for status in STATUS_OF.values())


@given(kind=st.text(max_size=20).filter(lambda k: k not in REFUSAL_KINDS))
def test_a_kind_outside_the_list_is_a_programming_error(kind: str) -> None:
    with pytest.raises(ValueError, match="unknown refusal kind"):
        Refused(kind, "code", "detail")  # type: ignore[arg-type]


@given(
    kind=st.sampled_from(REFUSAL_KINDS),
    code=st.from_regex(r"[a-z_]{1,20}", fullmatch=True),
    detail=st.text(min_size=1, max_size=80),
    wait=st.none() | st.floats(min_value=0.01, max_value=3600),
)
def test_the_answer_carries_code_detail_status_and_wait(
    kind: str, code: str, detail: str, wait: float | None
) -> None:
    exc = Refused(kind, code, detail, retry_after_s=wait)  # type: ignore[arg-type]
    response = refused(exc, files=[])
    assert response.status_code == STATUS_OF[exc.kind]
    assert response.body.startswith(b"{")
    assert json.loads(response.body) == {"error": code, "detail": detail, "files": []}
    if wait is None:
        assert "retry-after" not in response.headers
    else:
        assert int(response.headers["retry-after"]) >= wait
