"""Leaf facts: where the data dir is, the file names inside it, and defaults.

Anyone may import this module; it imports nothing of the project. Nothing here touches the
file system: paths are computed, never created (the store layer creates them).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

DATA_DIR_ENV = "LH_DATA_DIR"
"""Environment variable naming the data dir (Electron passes its user-data folder)."""

DEFAULT_DATA_DIR = Path("data")
"""Relative to the working directory, for `python -m server` in development."""

DEFAULT_HOST = "127.0.0.1"
READY_PREFIX = "LH_READY"
"""The ready line printed on stdout once the server accepts connections: `LH_READY {"port": N, "pid": P}`."""

TOKEN_ENV = "LH_API_TOKEN"  # noqa: S105 - an env var name, not a secret
"""Per-launch API token set by Electron main (desktop mode); absent in web mode."""

ORIGINS_ENV = "LH_ALLOWED_ORIGINS"
"""Comma-separated extra origins accepted by the server (e.g. the Vite dev server)."""

STDIN_EOF_ENV = "LH_EXIT_ON_STDIN_EOF"
"""When "1", the server stops once its stdin closes (the desktop shell holds the other end)."""

KEYRING_SERVICE = "learning-harness"
"""Service name under which API keys are stored in the OS keychain."""

OFFLINE_MODEL_NAME = "SmolLM2-135M-Instruct"
OFFLINE_CHILD_FLAG = "--serve-offline-model"
"""First argument that turns the frozen server executable into llama.cpp's server (build/entry.py):
a frozen build cannot run `python -m llama_cpp.server`, so it re-invokes itself with this flag."""
OFFLINE_READY_TIMEOUT_S = 120.0
"""Seconds a turn waits for the offline model server to come up before answering 503."""

WORKER_DEADLINE_S = 600.0
"""A Workbench worker's overall deadline, in seconds (request budgets bound each model call; this
bounds the whole job, browser runs included): past it the job ends as an honest error."""

API_KEY_ENV = {
    "openrouter": "LH_OPENROUTER_API_KEY",
    "openai": "LH_OPENAI_API_KEY",
    "openai-compatible": "LH_OPENAI_COMPATIBLE_API_KEY",
}
"""Environment variables that carry API keys, by provider (they win over the keychain)."""

SEARCH_KEY_ENV = {
    "tavily": "LH_TAVILY_API_KEY",
    "brave": "LH_BRAVE_API_KEY",
    "google": "LH_GOOGLE_SEARCH_API_KEY",
}
"""Environment variables that carry web search keys (the researcher's), by provider."""

DICTATION_KEY_ENV = {
    "deepgram": "LH_DEEPGRAM_API_KEY",
}
"""Environment variables that carry dictation keys (the learner's Deepgram key), by provider."""

DEEPGRAM_API_BASE_ENV = "LH_DEEPGRAM_API_BASE"
"""Deepgram's API base URL (tests point it at a loopback fake). The browser's dictation socket is
its WebSocket twin (`https` -> `wss`, `http` -> `ws`), the one outside origin the CSP connects to."""

DEFAULT_DEEPGRAM_API_BASE = "https://api.deepgram.com"

DICTATION_TOKEN_TTL_S = 30
"""Seconds a minted Deepgram token lets the browser open its socket (Deepgram's default; an open
socket outlives it)."""

SECRET_KEY_ENV = {**API_KEY_ENV, **SEARCH_KEY_ENV, **DICTATION_KEY_ENV}
"""Every key the app holds, by name -> its environment variable (the desktop shell sets these at
spawn; in desktop mode they are the only way keys reach the server, decision 0018)."""

SHELL_SECRET_ENV = "LH_SHELL_SECRET"  # noqa: S105 - an env var name, not a secret
"""Per-launch secret Electron main passes to the server (desktop mode) to push scoped subscription
auth (`PUT /api/shell/subscription-auth/{provider}`); never given to the renderer."""

SUBSCRIPTION_BASE_ENV = {
    "chatgpt_auth": ("LH_CHATGPT_AUTH_BASE", "https://auth.openai.com"),
    "chatgpt_api": ("LH_CHATGPT_API_BASE", "https://chatgpt.com/backend-api/codex"),
    "github": ("LH_GITHUB_BASE", "https://github.com"),
    "github_api": ("LH_GITHUB_API_BASE", "https://api.github.com"),
    "xai_auth": ("LH_XAI_AUTH_BASE", "https://auth.x.ai"),
    "xai_api": ("LH_XAI_API_BASE", "https://api.x.ai/v1"),
}
"""Subscription endpoints (issue 19 item 2): name -> (environment variable, default); tests point
the variables at loopback fakes."""

PROVIDER_BASE_URLS = {
    "openrouter": "https://openrouter.ai/api/v1",
    "openai": "https://api.openai.com/v1",
}


@dataclass(frozen=True)
class DataPaths:
    """Every path under one data dir. Computed, never created.

    Attributes:
        root: the data dir itself (absolute).
    """

    root: Path

    @property
    def settings(self) -> Path:
        return self.root / "settings.json"

    @property
    def chats(self) -> Path:
        return self.root / "chats"

    @property
    def graph(self) -> Path:
        """The graph ledgers (`*.jsonl`), written only by the extraction pipeline."""
        return self.root / "graph"

    @property
    def practice(self) -> Path:
        """Problem sets (`<id>.json`), written only by the practice pipeline."""
        return self.root / "practice"

    @property
    def summaries(self) -> Path:
        """Derived lesson summaries (`<chat id>.json`): a cache, deleted freely, rebuilt on demand."""
        return self.root / "cache" / "summaries"

    @property
    def intake(self) -> Path:
        """The accepted queue (`queue.jsonl`): imports and lesson triggers answered for and not
        yet finished, resumed at start; written only by the Library."""
        return self.root / "intake"

    @property
    def jobs(self) -> Path:
        """Workbench job records (`<id>.json`), written only by the job runner."""
        return self.root / "jobs"

    @property
    def secrets(self) -> Path:
        """Owner-only key file, used only where no OS keychain backend exists."""
        return self.root / "secrets.json"

    @property
    def subscriptions(self) -> Path:
        """Web mode's subscription logins: one owner-only `<provider>.json` each (issue 19)."""
        return self.root / "subscriptions"

    @property
    def lock(self) -> Path:
        return self.root / ".server.lock"

    @property
    def logs(self) -> Path:
        return self.root / "logs"


def resolve_data_dir(cli_value: str | None, env: dict[str, str] | None = None) -> Path:
    """The data dir: `--data-dir`, else `LH_DATA_DIR`, else `./data` (absolute, not created).

    Args:
        cli_value: the `--data-dir` argument, or None.
        env: the environment to read (defaults to `os.environ`).
    """
    environ = os.environ if env is None else env
    raw = cli_value or environ.get(DATA_DIR_ENV) or str(DEFAULT_DATA_DIR)
    return Path(raw).expanduser().resolve()
