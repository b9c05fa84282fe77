"""Fold AI SDK UI message stream chunks into the assistant UIMessage that is persisted.

The stream protocol is the Vercel AI SDK v6 "UI message stream" (chunks such as `start`,
`text-start`/`text-delta`/`text-end`, `tool-input-available`, `finish`). The browser folds the
same chunks with `useChat`; this module is the server's fold, so the saved record equals what the
learner saw, including a turn cut short by an abort (seed §5: persist the reply after the turn
ends, aborted turns included).
"""

from __future__ import annotations

import json
from typing import Any

JsonObj = dict[str, Any]

_CONTENT_TYPES_PREFIXES = ("text", "reasoning", "tool-", "dynamic-tool", "file", "source-", "data-")


class AssistantMessageFold:
    """Accumulates one assistant message from UI stream chunks.

    Usage: `fold = AssistantMessageFold(fallback_id)`, `fold.add(chunk)` for each chunk dict,
    then `fold.message()` for the persisted UIMessage (None when nothing worth saving streamed).

    Args:
        fallback_id: the message id to use when the stream's `start` chunk names none.
        initial: the assistant message this stream continues (after the learner answered its
            question), whose parts and metadata the new chunks extend.
    """

    def __init__(self, fallback_id: str, initial: JsonObj | None = None) -> None:
        self.message_id = str(initial["id"]) if initial else fallback_id
        self.parts: list[JsonObj] = [dict(p) for p in initial.get("parts", [])] if initial else []
        self.metadata: JsonObj = dict(initial.get("metadata") or {}) if initial else {}
        self.error_text: str | None = None
        self.finished = False
        self.saved = False
        """Set by the owner once the reply was persisted (or found empty), so it is saved once."""
        self.interrupted = False
        """Set by the owner when the turn was aborted, failed or ended without `finish`: the saved
        reply says so (`metadata.interrupted`). An `error` chunk implies it, and its text is kept
        as `metadata.error`."""
        self._text_index: dict[str, int] = {}
        self._reasoning_index: dict[str, int] = {}
        self._tool_index: dict[str, int] = {
            str(p["toolCallId"]): i for i, p in enumerate(self.parts) if isinstance(p.get("toolCallId"), str)
        }
        self._tool_input_text: dict[str, str] = {}

    # -- chunk handlers -------------------------------------------------------------------------
    def add(self, chunk: JsonObj) -> None:
        """Apply one chunk. Unknown chunk types are ignored (forward compatible)."""
        kind = chunk.get("type")
        if not isinstance(kind, str):
            return
        if kind == "start":
            if isinstance(chunk.get("messageId"), str):
                self.message_id = chunk["messageId"]
            self._merge_metadata(chunk.get("messageMetadata"))
        elif kind == "start-step":
            self.parts.append({"type": "step-start"})
        elif kind in ("text-start", "reasoning-start"):
            index = self._text_index if kind == "text-start" else self._reasoning_index
            index[chunk["id"]] = len(self.parts)
            self.parts.append({"type": kind.split("-")[0], "text": "", "state": "streaming"})
        elif kind in ("text-delta", "reasoning-delta"):
            index = self._text_index if kind == "text-delta" else self._reasoning_index
            if chunk.get("id") in index:
                self.parts[index[chunk["id"]]]["text"] += str(chunk.get("delta", ""))
        elif kind in ("text-end", "reasoning-end"):
            index = self._text_index if kind == "text-end" else self._reasoning_index
            if chunk.get("id") in index:
                self.parts[index[chunk["id"]]]["state"] = "done"
        elif kind.startswith("tool-"):
            self._tool_chunk(kind, chunk)
        elif kind == "data-subagent-artifact":
            pass  # a steer delivered into this reply: the record holds it as its own message
        elif kind.startswith("data-"):
            self.parts.append({k: v for k, v in chunk.items() if k != "transient"})
        elif kind in ("source-url", "source-document", "file"):
            self.parts.append(dict(chunk))
        elif kind == "message-metadata":
            self._merge_metadata(chunk.get("messageMetadata"))
        elif kind == "finish":
            self.finished = True
            self._merge_metadata(chunk.get("messageMetadata"))
        elif kind == "error":
            self.error_text = str(chunk.get("errorText", ""))

    def _merge_metadata(self, value: object) -> None:
        if isinstance(value, dict):
            self.metadata.update(value)

    def _tool_part(self, call_id: str, tool_name: str | None, dynamic: bool) -> JsonObj:
        if call_id not in self._tool_index:
            part: JsonObj = {"toolCallId": call_id, "state": "input-streaming", "input": None}
            if dynamic:
                part["type"] = "dynamic-tool"
                part["toolName"] = tool_name or "unknown"
            else:
                part["type"] = f"tool-{tool_name or 'unknown'}"
            self._tool_index[call_id] = len(self.parts)
            self.parts.append(part)
        return self.parts[self._tool_index[call_id]]

    def _tool_chunk(self, kind: str, chunk: JsonObj) -> None:
        call_id = chunk.get("toolCallId")
        if not isinstance(call_id, str):
            return
        dynamic = bool(chunk.get("dynamic"))
        part = self._tool_part(call_id, chunk.get("toolName"), dynamic)
        if kind == "tool-input-start":
            self._tool_input_text[call_id] = ""
        elif kind == "tool-input-delta":
            self._tool_input_text[call_id] = self._tool_input_text.get(call_id, "") + str(
                chunk.get("inputTextDelta", "")
            )
        elif kind == "tool-input-available":
            part.update(state="input-available", input=chunk.get("input"))
        elif kind == "tool-input-error":
            part.update(state="output-error", input=chunk.get("input"), errorText=chunk.get("errorText"))
        elif kind == "tool-output-available":
            part.update(state="output-available", output=chunk.get("output"))
        elif kind == "tool-output-error":
            part.update(state="output-error", errorText=chunk.get("errorText"))
        elif kind == "tool-output-denied":
            part.update(state="output-denied")
        if chunk.get("providerExecuted") is not None:
            part["providerExecuted"] = chunk["providerExecuted"]

    # -- result ---------------------------------------------------------------------------------
    def message(self) -> JsonObj | None:
        """The assistant UIMessage to persist, or None when no content streamed.

        Text still streaming (an aborted turn) is kept as it stood and marked done. A tool call
        whose input never completed is kept with its partial input text parsed when possible,
        else dropped: a half-written argument object is not evidence of anything.
        """
        parts: list[JsonObj] = []
        for part in self.parts:
            part = dict(part)
            if part.get("state") == "streaming":
                part["state"] = "done"
            if part.get("state") == "input-streaming":
                raw = self._tool_input_text.get(str(part.get("toolCallId")), "")
                try:
                    part["input"] = json.loads(raw) if raw else None
                except ValueError:
                    continue
                if part["input"] is None:
                    continue
                part["state"] = "input-available"
            parts.append(part)
        if not any(str(p.get("type", "")).startswith(_CONTENT_TYPES_PREFIXES) for p in parts):
            return None
        # Trailing step markers carry nothing.
        while parts and parts[-1].get("type") == "step-start":
            parts.pop()
        message: JsonObj = {"id": self.message_id, "role": "assistant", "parts": parts}
        metadata = dict(self.metadata)
        if self.interrupted or self.error_text is not None:  # cut short: never saved as complete
            metadata["interrupted"] = True
        if self.error_text:
            metadata["error"] = self.error_text
        if metadata:
            message["metadata"] = metadata
        return message
