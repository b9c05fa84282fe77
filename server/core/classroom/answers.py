"""The learner's answers to pending questions, accepted into the record (seed §5, the turn contract)."""

from __future__ import annotations

import copy

from server.core.classroom.questions import AnswerRejected, settle_answer
from server.core.contracts.questions import QUESTION_TOOLS
from server.core.refusals import Refused
from server.core.transcript import JsonObj, is_dangling, tool_name


def apply_answers(messages: list[JsonObj], incoming: JsonObj) -> list[JsonObj]:
    """Accept the learner's answers to pending questions, carried by the client's copy of the
    last assistant message (what `addToolOutput` produces).

    Only question parts that are pending in the record are taken; their outputs are re-validated
    and re-graded (`core.questions.settle_answer`). Everything else in the client's copy is ignored.

    Returns:
        The record's messages with those parts answered: a new list whose last message is a copy
        (answered); every other message is the record's very object (never mutated; issue 15:
        no copy of the whole transcript, and the store's log sees a tail change).

    Raises:
        Refused("conflict", not_pending): the message is not the record's last message, or none of
            its answers is for a pending question (already answered, or never asked).
        Refused("invalid", bad_answer): an answer does not fit its question.
    """
    if not messages or messages[-1].get("id") != incoming.get("id"):
        raise Refused(
            "conflict",
            "not_pending",
            "that question is no longer pending; reload the session to see where it stands",
        )
    answers = {
        p.get("toolCallId"): p
        for p in incoming.get("parts", [])
        if tool_name(p) in QUESTION_TOOLS and p.get("state") == "output-available"
    }
    out = list(messages)
    out[-1] = copy.deepcopy(messages[-1])
    accepted = 0
    for part in out[-1].get("parts", []):
        answer = answers.get(part.get("toolCallId"))
        if answer is None or tool_name(part) not in QUESTION_TOOLS or not is_dangling(part):
            continue
        try:
            part["output"] = settle_answer(str(tool_name(part)), part.get("input"), answer.get("output"))
        except AnswerRejected as exc:
            raise Refused("invalid", "bad_answer", f"{exc}; answer the question again") from exc
        part["state"] = "output-available"
        accepted += 1
    if accepted == 0:
        raise Refused(
            "conflict",
            "not_pending",
            "no pending question matches this answer (already answered?); reload the session",
        )
    return out
