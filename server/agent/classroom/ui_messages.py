"""UIMessages checked against the AI SDK schema the agent runs on (pydantic-ai's Vercel AI types).

Issue 10, defect 1: a learner message with a part `{"type": "text", "text": null}` was saved by the
write-ahead and then failed validation when the history was rebuilt for the model, on that turn and
every later one. Two guards:

- `message_problem(message)`: the whole incoming message, checked before anything is written (the
  turn answers 400 with the first problem in words);
- `usable_for_model(messages)`: a record that somehow holds an invalid message (an older build,
  an edited file) still opens and continues: invalid parts are left out of what the model sees,
  a message with no valid part is skipped, and the log says so. The record itself is not changed.

Issue 26, item 1: a learner message is taken only in the shape the composer sends
(`core.contracts.chat.LearnerMessage`, checked by `core.classroom.turns.learner_message`). A
record an older build let other parts into (a `reasoning`, `step-start`, `source-url`, tool or
`dynamic-tool` part, a file the app does not read or with a `file:` URL) keeps them; the model
reads of a user message only what a learner may send (`learner_parts_for_model`), and the log
names each part left out, once per message. A model that cannot read images
(`ResolvedModel.reads_images`: the offline model) reads each image part as a short text part
saying one was attached (`unseen_image_text`); the record keeps the image.
"""

from __future__ import annotations

import logging
import math
from typing import Any

from pydantic import TypeAdapter, ValidationError
from pydantic_ai.ui.vercel_ai.request_types import UIMessage

from server.core.contracts.chat import LearnerFile, LearnerText

log = logging.getLogger("lh.turn")

SAFE_INTEGER = 2**53 - 1
"""Largest integer a browser's JSON (IEEE double) keeps exactly; larger ones are refused."""
MAX_DEPTH = 64
"""Deepest nesting of objects and lists accepted inside a message."""

_MESSAGE = TypeAdapter(UIMessage)
_LEARNER_PART: TypeAdapter[LearnerText | LearnerFile] = TypeAdapter(LearnerText | LearnerFile)


def _numbers_problem(value: Any, where: str, depth: int = 0) -> str | None:
    """The first non-finite or out-of-range number (or too deep a nesting) inside `value`."""
    if depth > MAX_DEPTH:
        return f"{where} is nested more than {MAX_DEPTH} levels deep"
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and abs(value) > SAFE_INTEGER:
        return f"{where} holds the integer {str(value)[:20]}…, beyond ±2^53"
    if isinstance(value, float) and not math.isfinite(value):
        return f"{where} holds {value}, which is not a finite number"
    if isinstance(value, dict):
        for key, item in value.items():
            found = _numbers_problem(item, f"{where}.{key}", depth + 1)
            if found:
                return found
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = _numbers_problem(item, f"{where}[{index}]", depth + 1)
            if found:
                return found
    return None


def _describe(error: ValidationError, message: dict[str, Any]) -> str:
    """The most telling error of a union validation, as "part 1 (text): text: Input should be …".

    pydantic reports every variant of the part union; the useful errors are those of the variant
    whose `type` matched, so errors about the `type` literal itself are passed over first.
    """
    errors = error.errors(include_url=False)

    def variant(e: Any) -> tuple[Any, ...]:
        return tuple(e["loc"][:3])  # ("parts", index, "<PartClass>")

    about_type = ("literal_error", "union_tag_invalid", "string_pattern_mismatch")
    wrong_variant = {variant(e) for e in errors if e["type"] in about_type and e["loc"][-1:] == ("type",)}
    telling = [e for e in errors if variant(e) not in wrong_variant]
    first = (telling or errors)[0]
    loc = list(first["loc"])
    if len(loc) >= 2 and loc[0] == "parts" and isinstance(loc[1], int):
        index = loc[1]
        parts = message.get("parts") or []
        kind = parts[index].get("type") if index < len(parts) and isinstance(parts[index], dict) else None
        field = ".".join(str(p) for p in loc[2:] if not (isinstance(p, str) and p[:1].isupper())) or "part"
        return f"part {index} ({kind}): {field}: {first['msg']}"
    return f"{'.'.join(str(p) for p in loc) or 'message'}: {first['msg']}"


def message_problem(message: dict[str, Any]) -> str | None:
    """None when `message` is a valid AI SDK UIMessage the agent can run on, else its first problem
    in words (e.g. "part 1 (text): text: Input should be a valid string")."""
    found = _numbers_problem(message, "the message")
    if found:
        return found
    try:
        _MESSAGE.validate_python(message)
    except ValidationError as exc:
        return _describe(exc, message)
    return None


UsableMemo = dict[str, tuple[dict[str, Any], "dict[str, Any] | None"]]
"""Per message id: the message object checked, and what the model gets of it (None: skipped)."""


def usable_for_model(
    messages: list[dict[str, Any]], memo: UsableMemo | None = None, *, images: bool = True
) -> list[dict[str, Any]]:
    """The messages the model can be given: each valid message as it is; an invalid one with its
    invalid parts left out (skipped whole when none remains). Logs every repair. With `memo` (the
    caller's, per lesson and per `images`: a memo holds one capability's views), a message that is
    the very same object as last time, or an equal one, is not checked again (issue 15).
    `images`: whether the model reads images (`ResolvedModel.reads_images`); when not, each image
    part of a user message is given as `unseen_image_text` (`learner_parts_for_model`)."""
    if memo is not None:
        out: list[dict[str, Any]] = []
        kept: UsableMemo = {}
        for message in messages:
            key = str(message.get("id"))
            hit = memo.get(key)
            if hit is not None and hit[0] is not message and hit[0] == message:  # the same content
                hit = (message, message if hit[1] is hit[0] else hit[1])
            elif hit is None or hit[0] is not message:
                checked = usable_for_model([message], images=images)
                hit = (message, checked[0] if checked else None)
            kept[key] = hit
            if hit[1] is not None:
                out.append(hit[1])
        memo.clear()
        memo.update(kept)
        return out
    usable: list[dict[str, Any]] = []
    for given in messages:
        shown = learner_parts_for_model(given, images=images) if given.get("role") == "user" else given
        if shown is None:
            continue
        message = shown
        problem = message_problem(message)
        if problem is None:
            usable.append(message)
            continue
        parts = [
            part
            for part in message.get("parts") or []
            if message_problem({**message, "parts": [part]}) is None
        ]
        if parts and message_problem({**message, "parts": parts}) is None:
            log.warning(
                "message %s: %d invalid part(s) left out for the model (%s)",
                message.get("id"),
                len(message.get("parts") or []) - len(parts),
                problem,
            )
            usable.append({**message, "parts": parts})
        else:
            log.warning("message %s skipped for the model: %s", message.get("id"), problem)
    return usable


def _sendable(part: Any) -> bool:
    """Whether `part` is one a learner may send (`core.contracts.chat.LearnerPart`)."""
    if not isinstance(part, dict) or part.get("type") not in ("text", "file"):
        return False
    try:
        _LEARNER_PART.validate_python(part)
    except ValidationError:
        return False
    return True


def unseen_image_text(media_type: str) -> str:
    """What a model that cannot read images reads in place of a learner's image part, e.g.
    "[the learner attached an image (image/png) that this model cannot see]"."""
    return f"[the learner attached an image ({media_type}) that this model cannot see]"


def _unseen_images(parts: list[Any]) -> list[Any]:
    """`parts` (sendable ones) with each file part as its `unseen_image_text` text part."""
    return [
        {"type": "text", "text": unseen_image_text(str(p.get("mediaType")))} if p.get("type") == "file" else p
        for p in parts
    ]


def learner_parts_for_model(message: dict[str, Any], *, images: bool = True) -> dict[str, Any] | None:
    """A user message as the model may read it: its parts a learner may send (text, images as
    data URLs), each as it is; with `images=False` (a model that cannot read them,
    `ResolvedModel.reads_images`) each image as a text part saying one was attached
    (`unseen_image_text`). `data-*` parts (a finished job's artifact in a steer: UI payload the
    model never read) are left out quietly; any other part (what an older build let in) is left
    out with a warning naming it. Returns the very message when nothing is left out or replaced,
    a copy otherwise, None (logged) when nothing remains. The record is not changed."""
    parts = message.get("parts")
    if not isinstance(parts, list):
        return message  # `message_problem` says what is wrong with it
    kept = [p for p in parts if _sendable(p)]
    if not images and any(p.get("type") == "file" for p in kept):
        kept = _unseen_images(kept)
    elif len(kept) == len(parts):
        return message
    dropped = [
        f"part {i} ({str(p.get('type'))[:60] if isinstance(p, dict) else 'not an object'})"
        for i, p in enumerate(parts)
        if not _sendable(p) and not (isinstance(p, dict) and str(p.get("type", "")).startswith("data-"))
    ]
    if dropped:
        log.warning(
            "message %s: %s left out for the model (not something a learner may send; the record keeps it)",
            str(message.get("id"))[:80],
            ", ".join(dropped),
        )
    if not kept:
        log.warning(
            "message %s skipped for the model: no part a learner may send", str(message.get("id"))[:80]
        )
        return None
    return {**message, "parts": kept}
