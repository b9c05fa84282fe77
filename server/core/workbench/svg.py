"""SVG sanitizing (seed §5.1): a visual's SVG is untrusted model output; only drawing survives.

`sanitize_svg(text)` parses with the stdlib XML parser (a DOCTYPE or an ENTITY declaration is
refused, so nothing expands), requires an `<svg>` root in the SVG namespace, and removes what could
run code or reach the network:

- elements: `script`, `foreignObject`, `iframe`, `object`, `embed`, `audio`, `video`, `handler`,
  `listener` (in any namespace), every element outside the SVG namespace, and `animate*`/`set`
  whose `attributeName` targets `href`/`xlink:href` or an `on*` handler;
- attributes: every `on*` handler; `href`/`xlink:href` unless it is a `#fragment` or a
  `data:image/png|jpeg|gif;base64,` URL; any value whose CSS holds `url(` with anything but a
  `#fragment`, `@import`, `expression(` or a CSS escape (`\\`);
- `<style>` elements whose text holds the same CSS;
- comments and processing instructions (e.g. `<?xml-stylesheet?>`).

Pure: no IO. Sizes are characters; `MAX_ELEMENTS` counts elements of the parsed document.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any
from xml.parsers import expat

from server.core.contracts.jobs import MAX_SVG

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"
MAX_ELEMENTS = 20_000
"""Elements in one SVG; a document with more is refused."""

_DROPPED = frozenset(
    {"script", "foreignobject", "iframe", "object", "embed", "audio", "video", "handler", "listener"}
)
_ANIMATIONS = frozenset({"animate", "animatetransform", "animatemotion", "animatecolor", "set"})
_DATA_IMAGE = re.compile(r"^data:image/(png|jpeg|jpg|gif);base64,[A-Za-z0-9+/=\s]*$", re.I)
_CSS_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_URL = re.compile(r"url\(\s*(['\"]?)\s*([^)'\"]*)", re.I)


# The serializer's prefixes: SVG as the default namespace, xlink as `xlink:` (process-wide, and what
# every SVG writer expects).
ET.register_namespace("", SVG_NS)
ET.register_namespace("xlink", XLINK_NS)


class SvgRejected(ValueError):
    """The SVG cannot be used at all; `reason` is one plain sentence (what to fix)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _split(name: str) -> tuple[str, str]:
    """`{ns}local` -> (ns, local); a bare name -> ("", name)."""
    if name.startswith("{"):
        ns, _, local = name[1:].partition("}")
        return ns, local
    return "", name


def unsafe_css(css: str) -> str | None:
    """Why this CSS (a style attribute, a `<style>` text or a presentation value) is unsafe, or None."""
    text = _CSS_COMMENT.sub("", css)
    lowered = text.lower()
    if "\\" in text:
        return "a CSS escape"
    if "@import" in lowered:
        return "@import"
    if "expression(" in lowered:
        return "expression()"
    for match in _URL.finditer(text):
        if not match.group(2).strip().startswith("#"):
            return "url() pointing outside the picture"
    if "url(" in lowered and not _URL.search(text):
        return "a malformed url()"
    return None


def _safe_href(value: str) -> bool:
    value = value.strip()
    return value.startswith("#") or bool(_DATA_IMAGE.match(value))


def _check_declarations(text: str) -> None:
    """Refuse a DOCTYPE or ENTITY declaration (no entity is ever expanded)."""

    def refuse(*_: Any) -> None:
        raise SvgRejected("The SVG has a DOCTYPE or ENTITY declaration; remove it (none is allowed).")

    parser = expat.ParserCreate()
    parser.StartDoctypeDeclHandler = refuse
    parser.EntityDeclHandler = refuse
    parser.UnparsedEntityDeclHandler = refuse
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    try:
        parser.Parse(text, True)
    except expat.ExpatError as exc:
        raise SvgRejected(
            f"The SVG is not well-formed XML ({expat.ErrorString(exc.code)}, line {exc.lineno})."
        ) from exc


def _clean_attributes(element: ET.Element) -> None:
    for name in list(element.attrib):
        _, local = _split(name)
        low = local.lower()
        value = element.attrib[name]
        css_like = low == "style" or "url(" in value.lower() or "\\" in value
        if (
            low.startswith("on")
            or (low == "href" and not _safe_href(value))
            or (css_like and unsafe_css(value))
        ):
            del element.attrib[name]


def _drop(element: ET.Element) -> bool:
    ns, local = _split(element.tag)
    low = local.lower()
    if ns != SVG_NS or low in _DROPPED:
        return True
    if low in _ANIMATIONS:
        target = element.attrib.get("attributeName", "").strip().lower()
        if target.split(":")[-1] == "href" or target.startswith("on"):
            return True
    return low == "style" and unsafe_css("".join(element.itertext())) is not None


def _sanitize(element: ET.Element) -> None:
    _clean_attributes(element)
    for child in list(element):
        if _drop(child):
            element.remove(child)
        else:
            _sanitize(child)


def sanitize_svg(text: str) -> str:
    """The sanitized SVG (serialized XML, the SVG namespace as the default one).

    Args:
        text: an SVG document, at most `MAX_SVG` characters.
    Raises:
        SvgRejected: too long, not well-formed, a DOCTYPE/ENTITY, a root other than `<svg>` in the
            SVG namespace, or more than `MAX_ELEMENTS` elements.
    """
    if not isinstance(text, str):
        raise SvgRejected("The SVG must be text.")
    if len(text) > MAX_SVG:
        raise SvgRejected(f"The SVG is {len(text):,} characters; at most {MAX_SVG:,} are allowed.")
    if not text.strip():
        raise SvgRejected("The SVG is empty.")
    _check_declarations(text)
    try:
        root = ET.fromstring(text)  # noqa: S314 - declarations refused above, so no entity expands
    except ET.ParseError as exc:
        raise SvgRejected(f"The SVG is not well-formed XML ({exc}).") from exc
    ns, local = _split(root.tag)
    if local != "svg" or ns != SVG_NS:
        raise SvgRejected(
            f'The root element is <{local}> in namespace "{ns or "none"}"; it must be <svg xmlns="{SVG_NS}">.'
        )
    count = sum(1 for _ in root.iter())
    if count > MAX_ELEMENTS:
        raise SvgRejected(f"The SVG has {count:,} elements; at most {MAX_ELEMENTS:,} are allowed.")
    _sanitize(root)
    return ET.tostring(root, encoding="unicode")
