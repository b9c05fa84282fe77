"""Reading a PNG's pixels just enough to tell a drawing from a blank screen (seed §5.1: sub-agents
verify). Pure: stdlib `zlib` and numpy, no IO, no imaging library.

Handles what a browser screenshot is: 8-bit, non-interlaced, greyscale/RGB/grey+alpha/RGBA
(colour types 0, 2, 4, 6). Anything else raises `PngUnreadable`.
"""

from __future__ import annotations

import struct
import zlib

import numpy as np
import numpy.typing as npt

_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_CHANNELS = {0: 1, 2: 3, 4: 2, 6: 4}
MAX_PIXELS = 40_000_000
"""Pixels of one image; a larger one is refused (a decompression bomb)."""


class PngUnreadable(ValueError):
    """The bytes are not a PNG this reader handles; the message says why."""


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def _unfilter_slow(kind: int, src: bytes, up: bytes, bpp: int) -> bytes:
    cur = bytearray(len(src))
    for i in range(len(src)):
        left = cur[i - bpp] if i >= bpp else 0
        if kind == 3:
            cur[i] = (src[i] + ((left + up[i]) >> 1)) & 0xFF
        else:
            upleft = up[i - bpp] if i >= bpp else 0
            cur[i] = (src[i] + _paeth(left, up[i], upleft)) & 0xFF
    return bytes(cur)


def decode_png(data: bytes) -> npt.NDArray[np.uint8]:
    """The pixels as an array of shape (height, width, channels), channels 1-4 as stored.

    Raises:
        PngUnreadable: not a PNG, truncated, or a format other than 8-bit non-interlaced.
    """
    if not data.startswith(_SIGNATURE):
        raise PngUnreadable("not a PNG (bad signature)")
    pos = len(_SIGNATURE)
    header: tuple[int, ...] | None = None
    idat = bytearray()
    while pos + 8 <= len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        if len(body) != length:
            raise PngUnreadable("the PNG is truncated")
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body[:13])
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    if header is None:
        raise PngUnreadable("the PNG has no header")
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in _CHANNELS or interlace != 0:
        raise PngUnreadable(
            f"unsupported PNG (bit depth {depth}, colour type {colour}, interlace {interlace})"
        )
    if width * height > MAX_PIXELS or width == 0 or height == 0:
        raise PngUnreadable(f"unsupported PNG size {width}x{height}")
    bpp = _CHANNELS[colour]
    stride = width * bpp
    inflater = zlib.decompressobj()
    try:
        raw = inflater.decompress(bytes(idat), (stride + 1) * height)
    except zlib.error as exc:
        raise PngUnreadable(f"the PNG's pixel data is corrupt ({exc})") from exc
    if len(raw) != (stride + 1) * height:
        raise PngUnreadable("the PNG's pixel data is truncated")
    rows = np.frombuffer(raw, dtype=np.uint8).reshape(height, stride + 1)
    out = np.zeros((height, stride), dtype=np.uint8)
    prior = np.zeros(stride, dtype=np.uint8)
    for y in range(height):
        kind_byte = int(rows[y, 0])
        line = rows[y, 1:]
        if kind_byte == 0:
            cur = line.copy()
        elif kind_byte == 1:  # Sub: a running sum per channel
            cur = (
                np.cumsum(line.reshape(width, bpp), axis=0, dtype=np.uint64).astype(np.uint8).reshape(stride)
            )
        elif kind_byte == 2:  # Up
            cur = (line.astype(np.uint16) + prior).astype(np.uint8)
        elif kind_byte in (3, 4):  # Average / Paeth: sequential along the row
            cur = np.frombuffer(
                _unfilter_slow(kind_byte, line.tobytes(), prior.tobytes(), bpp), dtype=np.uint8
            )
        else:
            raise PngUnreadable(f"the PNG uses an unknown row filter {kind_byte}")
        out[y] = cur
        prior = cur
    return out.reshape(height, width, bpp)


def is_uniform(data: bytes) -> bool:
    """Whether every pixel of the PNG has the same value (a blank screen). Raises PngUnreadable."""
    pixels = decode_png(data)
    flat = pixels.reshape(-1, pixels.shape[2])
    return bool((flat == flat[0]).all())
