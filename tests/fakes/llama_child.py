"""A scripted stand-in for llama.cpp's server child, for the offline model's crash paths.

Run as `python tests/fakes/llama_child.py --port N --script A,B,... --starts FILE [--env-out FILE]`.
Each start appends a line to FILE; the child of the k-th start (1-based) plays `script[k-1]` (the
last entry when there are fewer). Behaviours:

- `ok`: answers `/v1/models`, the self-check completion, and chat completions (a one-word reply);
- `crash-check`: answers `/v1/models`, then dies by SIGSEGV on the self-check completion;
- `crash-chat`: passes the self-check, then dies by SIGSEGV on the first chat completion;
- `crash-second-chat`: passes the self-check, answers the first chat completion with a sentence
  and a call of a tool that does not exist (so the agent asks again, in the same turn), then dies
  by SIGSEGV on the second chat completion: a crash after the turn's content has started;
- `hang-chat`: passes the self-check, then never answers a chat completion (still alive, port
  open: a hang in the middle of a turn);
- `exit1`: writes a reason to stderr and exits with status 1 at once;
- `hang`: never answers (accepts nothing);
- `hang-deaf`: never answers and ignores SIGTERM (only SIGKILL ends it);
- `bad-check`: answers the self-check with HTTP 500.

While a file `hold-chat` exists beside FILE, every chat completion waits for it to be removed (a
reply the test can watch being written).

A real process with a real socket and a real signal: the server under test must reap it.
"""

from __future__ import annotations

import signal
import sys

if "hang-deaf" in sys.argv:  # before anything slow: a SIGTERM sent early must not kill it
    signal.signal(signal.SIGTERM, signal.SIG_IGN)

import argparse
import ctypes
import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


def segfault() -> None:
    """A real segmentation fault, synchronous in the calling thread (as llama.cpp's was)."""
    ctypes.string_at(0)


def tool_call_answer() -> dict:
    """A whole chat completion: a sentence, then a call of an unknown tool (the agent retries)."""
    call = {"id": "call_1", "type": "function", "function": {"name": "no_such_tool", "arguments": "{}"}}
    return {
        "id": "c1",
        "object": "chat.completion",
        "created": 0,
        "model": "SmolLM2-135M-Instruct",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "Let us begin.", "tool_calls": [call]},
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--script", required=True)
    parser.add_argument("--starts", required=True)
    parser.add_argument("--env-out")
    args, _ = parser.parse_known_args()
    starts = Path(args.starts)
    with starts.open("a") as handle:
        handle.write(f"{os.getpid()}\n")
    index = len(starts.read_text().splitlines())
    script = args.script.split(",")
    behaviour = script[min(index, len(script)) - 1]
    if args.env_out:
        Path(args.env_out).write_text(json.dumps(sorted(os.environ)))

    if behaviour == "exit1":
        print("error: the scripted child refuses to start", file=sys.stderr, flush=True)
        return 1
    if behaviour in ("hang", "hang-deaf"):
        if behaviour == "hang-deaf":
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        time.sleep(3600)
        return 0

    chats = 0
    lock = threading.Lock()
    hold = starts.with_name("hold-chat")

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_: object) -> None:
            pass

        def answer(self, status: int, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self.answer(200, {"object": "list", "data": [{"id": "SmolLM2-135M-Instruct", "object": "model"}]})

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            if self.path.endswith("/completions") and "chat" not in self.path:
                if behaviour == "crash-check":
                    segfault()
                if behaviour == "bad-check":
                    self.answer(500, {"error": "scripted"})
                    return
                self.answer(200, {"choices": [{"text": " it", "index": 0, "finish_reason": "length"}]})
                return
            while hold.exists():  # the test holds this chat completion until it removes the file
                time.sleep(0.05)
            nonlocal chats
            with lock:
                chats += 1
                number = chats
            if behaviour == "crash-chat" or (behaviour == "crash-second-chat" and number >= 2):
                segfault()
            if behaviour == "hang-chat":
                time.sleep(3600)
            if behaviour == "crash-second-chat":
                self.answer(200, tool_call_answer())
                return
            self.answer(
                200,
                {
                    "id": "c1",
                    "object": "chat.completion",
                    "created": 0,
                    "model": "SmolLM2-135M-Instruct",
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": "Hello."},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
                },
            )

    ThreadingHTTPServer(("127.0.0.1", args.port), Handler).serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
