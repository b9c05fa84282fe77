"""Issue 26, item 6 (a burst stalls the server): the connections `python -m server` accepts have
Nagle's algorithm off.

asyncio sets `TCP_NODELAY` on an accepted socket only when the socket's protocol is
`IPPROTO_TCP`; a listening socket made as `socket(AF_INET, SOCK_STREAM)` has protocol 0, so its
connections kept Nagle on, and a response's body (written after its headers) waited for the
client's delayed ACK: 40-200 ms per request under a steady poll (docs/benchmarks.md, the burst).
"""

from __future__ import annotations

import asyncio
import socket

from server.__main__ import _bind


async def _accepted_nodelay(listener: socket.socket) -> int:
    """TCP_NODELAY of the socket asyncio's server made for one connection to `listener`."""
    accepted: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        accepted.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
        writer.close()

    server = await asyncio.start_server(handle, sock=listener)
    try:
        _, writer = await asyncio.open_connection(*listener.getsockname()[:2])
        value = await asyncio.wait_for(accepted, 30)
        writer.close()
        return value
    finally:
        server.close()
        await server.wait_closed()


def test_the_listening_socket_is_tcp_and_its_connections_have_nagle_off() -> None:
    listener = _bind("127.0.0.1", 0)
    assert listener.proto == socket.IPPROTO_TCP
    assert asyncio.run(_accepted_nodelay(listener)) != 0
