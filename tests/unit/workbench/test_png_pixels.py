"""The screenshot reader (`server.core.workbench.png`): every PNG row filter decodes to the pixels
that were encoded, and a blank screen is told from a drawing."""

from __future__ import annotations

import struct
import zlib

import numpy as np
import pytest

from server.core.workbench.png import PngUnreadable, decode_png, is_uniform


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else (b if pb <= pc else c)


def encode(pixels: np.ndarray, filters: list[int]) -> bytes:
    """A PNG of `pixels` (h, w, 3|4 uint8), row y filtered with `filters[y % len(filters)]`."""
    height, width, bpp = pixels.shape
    rows = pixels.reshape(height, width * bpp).astype(int)
    raw = bytearray()
    for y in range(height):
        kind = filters[y % len(filters)]
        line = rows[y]
        up = rows[y - 1] if y else np.zeros_like(line)
        out = []
        for i, x in enumerate(line):
            a = line[i - bpp] if i >= bpp else 0
            b = up[i]
            c = up[i - bpp] if i >= bpp else 0
            pred = [0, a, b, (a + b) // 2, _paeth(a, b, c)][kind]
            out.append((x - pred) % 256)
        raw += bytes([kind, *out])
    colour = {3: 2, 4: 6}[bpp]
    header = struct.pack(">IIBBBBB", width, height, 8, colour, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(raw))
        + _chunk(b"IEND", b"")
    )


@pytest.mark.parametrize("bpp", [3, 4])
def test_every_row_filter_decodes_to_the_encoded_pixels(bpp: int) -> None:
    rng = np.random.default_rng(7)
    pixels = rng.integers(0, 256, size=(10, 9, bpp), dtype=np.uint8)
    png = encode(pixels, [0, 1, 2, 3, 4])
    assert np.array_equal(decode_png(png), pixels)
    assert not is_uniform(png)


def test_a_blank_screen_is_uniform_and_one_dot_is_not() -> None:
    blank = np.full((20, 30, 3), 255, dtype=np.uint8)
    assert is_uniform(encode(blank, [1, 2, 4]))
    blank[13, 17] = (0, 0, 0)
    assert not is_uniform(encode(blank, [1, 2, 4]))


def test_garbage_is_refused() -> None:
    with pytest.raises(PngUnreadable, match="signature"):
        decode_png(b"GIF89a")
    png = encode(np.zeros((4, 4, 3), dtype=np.uint8), [0])
    with pytest.raises(PngUnreadable):
        decode_png(png[:40])
