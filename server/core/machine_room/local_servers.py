"""Model servers already running on this machine (issue 29 item 2): the usual loopback ports of the
OpenAI-compatible servers a learner may have installed, and how their `/v1/models` answer is read.

Pure. The services layer asks each port (`services/machine_room/first_run.py`); this module says
which ports, what each product is called, and which model ids an answer lists.

The port table: Ollama 11434, LM Studio 1234, llama.cpp server 8080, vLLM 8000, Jan 1337. Another
port for a product (tests, or a server moved off its default) comes from `LH_LOCAL_SERVER_PORTS`,
e.g. `ollama=41434,jan=0` (0 leaves that product out); `ports_from` reads it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

PORTS_ENV = "LH_LOCAL_SERVER_PORTS"
"""Environment variable overriding the table's ports: comma-separated `product=port` pairs."""

LOOPBACK_HOST = "127.0.0.1"
"""Only this machine is asked; nothing on the network."""

MAX_MODELS = 200
"""Model ids kept from one answer (a server listing a whole catalogue is cut here)."""

MAX_MODEL_ID = 200
"""The longest model id kept (a slot's model id allows 200 characters)."""


@dataclass(frozen=True)
class LocalServer:
    """One product's usual server.

    Attributes:
        key: the product's short name in `LH_LOCAL_SERVER_PORTS` and on the wire ("ollama").
        name: what the page calls it ("Ollama").
        port: the loopback TCP port it listens on by default (1-65535).
    """

    key: str
    name: str
    port: int

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL a model slot uses, e.g. "http://127.0.0.1:11434/v1"."""
        return f"http://{LOOPBACK_HOST}:{self.port}/v1"

    @property
    def models_url(self) -> str:
        """Where its model list is asked: `<base_url>/models`."""
        return f"{self.base_url}/models"


LOCAL_SERVERS: tuple[LocalServer, ...] = (
    LocalServer("ollama", "Ollama", 11434),
    LocalServer("lmstudio", "LM Studio", 1234),
    LocalServer("llamacpp", "llama.cpp server", 8080),
    LocalServer("vllm", "vLLM", 8000),
    LocalServer("jan", "Jan", 1337),
)
"""The products asked, in the order the page lists what answers."""


def ports_from(value: str | None, table: tuple[LocalServer, ...] = LOCAL_SERVERS) -> tuple[LocalServer, ...]:
    """The table with the ports `value` (the `LH_LOCAL_SERVER_PORTS` text) gives; port 0 drops a
    product. None or blank: the table as is.

    Raises:
        ValueError: in plain words, naming the part that is wrong: not `product=port`, an unknown
            product, a port that is not a whole number from 0 to 65535, or a product named twice.
    """
    if value is None or not value.strip():
        return table
    by_key = {server.key: server for server in table}
    chosen: dict[str, int] = {}
    for part in value.split(","):
        item = part.strip()
        if not item:
            continue
        key, sep, port_text = item.partition("=")
        key, port_text = key.strip().lower(), port_text.strip()
        if not sep or not key:
            raise ValueError(f"{PORTS_ENV}: {item!r} is not product=port (for example ollama=11434)")
        if key not in by_key:
            known = ", ".join(by_key)
            raise ValueError(f"{PORTS_ENV}: {key!r} is not one of {known}")
        if key in chosen:
            raise ValueError(f"{PORTS_ENV}: {key} is named twice")
        if not port_text.isascii() or not port_text.isdigit() or int(port_text) > 65535:
            raise ValueError(f"{PORTS_ENV}: the port of {key} must be a whole number from 0 to 65535")
        chosen[key] = int(port_text)
    return tuple(
        replace(server, port=chosen.get(server.key, server.port))
        for server in table
        if chosen.get(server.key, server.port) != 0
    )


def ports_in(environ: Mapping[str, str]) -> tuple[LocalServer, ...]:
    """`ports_from` of `environ[PORTS_ENV]`. Raises ValueError as `ports_from` does."""
    return ports_from(environ.get(PORTS_ENV))


def models_of(body: object) -> list[str] | None:
    """The model ids an OpenAI-compatible `GET /v1/models` answer lists, in its order, each once.

    Every product in the table answers `{"object": "list", "data": [{"id": "<model>", ...}, ...]}`
    (llama.cpp's server adds a `models` list, vLLM `root` / `max_model_len`, Ollama `owned_by`:
    extra fields are ignored). Ids that are not text, are blank or longer than `MAX_MODEL_ID` are
    skipped; at most `MAX_MODELS` are kept.

    Returns None when the answer is not that shape (some other program on the port); an empty
    list when the server answers but has no model.
    """
    if not isinstance(body, dict):
        return None
    data = body.get("data")
    if not isinstance(data, list):
        return None
    ids: list[str] = []
    for entry in data:
        if not isinstance(entry, dict):
            continue
        model = entry.get("id")
        if not isinstance(model, str):
            continue
        model = model.strip()
        if model and len(model) <= MAX_MODEL_ID and model not in ids:
            ids.append(model)
        if len(ids) == MAX_MODELS:
            break
    return ids
