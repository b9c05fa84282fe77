"""`sanitize_svg` (seed §5.1): a visual's SVG keeps its drawing and loses everything that could run
code or reach the network; hostile documents are refused fast with a plain reason."""

from __future__ import annotations

import time
import xml.etree.ElementTree as ET

import pytest

from server.core.contracts.jobs import MAX_SVG
from server.core.workbench.svg import MAX_ELEMENTS, SVG_NS, XLINK_NS, SvgRejected, sanitize_svg

HEAD = f'<svg xmlns="{SVG_NS}" xmlns:xlink="{XLINK_NS}" viewBox="0 0 100 100">'


def svg(body: str, head: str = HEAD) -> str:
    return f"{head}{body}</svg>"


def tags(text: str) -> list[str]:
    return [el.tag.split("}")[-1] for el in ET.fromstring(text).iter()]


def attrs(text: str) -> list[tuple[str, str]]:
    return [(k, v) for el in ET.fromstring(text).iter() for k, v in el.attrib.items()]


def test_script_elements_are_dropped_in_any_namespace() -> None:
    out = sanitize_svg(
        svg(
            '<script>alert(1)</script><circle r="5"/>'
            '<h:script xmlns:h="http://www.w3.org/1999/xhtml">alert(2)</h:script>'
            '<foreignObject><div xmlns="http://www.w3.org/1999/xhtml">x</div></foreignObject>'
            "<iframe/><object/><embed/><audio/><video/>"
        )
    )
    assert tags(out) == ["svg", "circle"]
    assert "alert" not in out


def test_every_on_attribute_is_dropped() -> None:
    out = sanitize_svg(
        svg('<rect width="10" height="10" onclick="x()" ONMOUSEOVER="y()"/>', HEAD[:-1] + ' onload="z()">')
    )
    assert ("width", "10") in attrs(out)
    assert not [k for k, _ in attrs(out) if k.lower().startswith("on")]
    assert "x()" not in out and "z()" not in out


def test_external_href_is_dropped_fragment_and_inline_image_kept() -> None:
    png = "data:image/png;base64,iVBORw0KGgo="
    out = sanitize_svg(
        svg(
            '<defs><circle id="dot" r="3"/></defs>'
            '<a href="javascript:alert(1)"><use href="#dot"/></a>'
            '<use href="https://evil.example/sprite.svg#x"/>'
            f'<image href="{png}" width="5" height="5"/>'
            '<image href="data:image/svg+xml;base64,PHN2Zz4=" width="5" height="5"/>'
        )
    )
    hrefs = [v for k, v in attrs(out) if k.endswith("href")]
    assert hrefs == ["#dot", png]


def test_xlink_href_is_checked_too() -> None:
    out = sanitize_svg(svg('<use xlink:href="http://evil.example/a.svg#b"/><use xlink:href="#ok"/>'))
    assert [v for k, v in attrs(out) if k == f"{{{XLINK_NS}}}href"] == ["#ok"]


def test_animation_that_targets_href_or_handlers_is_dropped() -> None:
    out = sanitize_svg(
        svg(
            '<a><animate attributeName="href" to="javascript:alert(1)"/>'
            '<set attributeName="xlink:href" to="javascript:alert(1)"/>'
            '<set attributeName="onclick" to="alert(1)"/>'
            '<animate attributeName="opacity" from="0" to="1" dur="1s"/></a>'
        )
    )
    assert tags(out) == ["svg", "a", "animate"]
    assert "javascript" not in out


@pytest.mark.parametrize(
    "css",
    [
        "fill: url(https://evil.example/x.svg#p)",
        "fill: url('//evil.example/p')",
        "background: u\\72l(http://evil.example)",
        "@import 'https://evil.example/a.css'",
        "width: expression(alert(1))",
    ],
)
def test_style_with_external_url_import_or_expression_is_dropped(css: str) -> None:
    out = sanitize_svg(svg(f'<rect style="{css}" width="1"/><style>{css}</style>'))
    assert attrs(out) == [("viewBox", "0 0 100 100"), ("width", "1")]
    assert tags(out) == ["svg", "rect"]


def test_fragment_urls_in_styles_and_presentation_attributes_survive() -> None:
    body = (
        '<defs><linearGradient id="g"><stop offset="0" stop-color="red"/></linearGradient></defs>'
        '<rect style="fill: url(#g); stroke: black" width="1"/><path fill="url(#g)" d="M0 0L1 1"/>'
        "<style>.a { fill: url('#g') }</style>"
    )
    out = sanitize_svg(svg(body))
    assert ("style", "fill: url(#g); stroke: black") in attrs(out)
    assert ("fill", "url(#g)") in attrs(out)
    assert "style" in tags(out)
    assert sanitize_svg(svg('<path fill="url(http://x/y)" d="M0 0"/>')).count("url(") == 0


def test_doctype_entity_bomb_is_refused() -> None:
    bomb = (
        '<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY a "aaaaaaaaaa">'
        '<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>'
        f'<svg xmlns="{SVG_NS}"><text>&c;</text></svg>'
    )
    with pytest.raises(SvgRejected, match="DOCTYPE or ENTITY"):
        sanitize_svg(bomb)
    with pytest.raises(SvgRejected, match="DOCTYPE"):
        sanitize_svg(f'<!DOCTYPE svg SYSTEM "http://evil.example/x.dtd"><svg xmlns="{SVG_NS}"/>')


def test_fifty_megabytes_of_path_are_refused_before_parsing() -> None:
    huge = svg('<path d="' + "M0 0 L1 1 " * 5_000_000 + '"/>')
    assert len(huge) > 50_000_000
    started = time.perf_counter()
    with pytest.raises(SvgRejected, match=f"at most {MAX_SVG:,}"):
        sanitize_svg(huge)
    assert time.perf_counter() - started < 0.5


def test_too_many_elements_are_refused() -> None:
    many = svg("<g/>" * (MAX_ELEMENTS + 1))
    assert len(many) <= MAX_SVG
    with pytest.raises(SvgRejected, match="elements"):
        sanitize_svg(many)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('<html xmlns="http://www.w3.org/1999/xhtml"><svg/></html>', "root element is <html>"),
        ("<svg><rect/></svg>", 'namespace "none"'),
        (f'<svg xmlns="{SVG_NS}"><rect></svg>', "not well-formed"),
        ("   ", "empty"),
    ],
)
def test_bad_documents_are_refused_with_a_plain_reason(text: str, reason: str) -> None:
    with pytest.raises(SvgRejected, match=reason) as caught:
        sanitize_svg(text)
    assert isinstance(caught.value, ValueError)
    assert caught.value.reason == str(caught.value)


def test_a_normal_diagram_survives_unchanged_in_meaning() -> None:
    diagram = svg(
        '<defs><marker id="arrow" markerWidth="10" markerHeight="10" refX="5" refY="5" orient="auto">'
        '<path d="M0,0 L10,5 L0,10 z" fill="#333"/></marker></defs>'
        "<title>Force on a block</title>"
        '<g transform="translate(10,10)" font-family="sans-serif">'
        '<rect x="10" y="40" width="30" height="20" fill="#8cf" stroke="#036"/>'
        '<line x1="40" y1="50" x2="80" y2="50" stroke="#333" marker-end="url(#arrow)"/>'
        '<text x="60" y="45" text-anchor="middle">F = m·a</text>'
        '<animate attributeName="opacity" values="0;1" dur="2s"/></g>'
    )
    out = sanitize_svg(diagram)

    def shape(text: str) -> list[tuple[str, dict[str, str], str]]:
        return [(el.tag, dict(el.attrib), (el.text or "").strip()) for el in ET.fromstring(text).iter()]

    assert shape(out) == shape(diagram)
    assert sanitize_svg(out) == out
