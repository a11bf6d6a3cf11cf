"""Go's `%q`, so that error texts quoting names match upstream's byte for byte."""

from __future__ import annotations

#: Go's escapes for `%q`; other non-printable characters use \x, \u or \U
_GO_ESCAPES = {
    "\a": r"\a",
    "\b": r"\b",
    "\f": r"\f",
    "\n": r"\n",
    "\r": r"\r",
    "\t": r"\t",
    "\v": r"\v",
    "\\": r"\\",
    '"': r"\"",
}


def go_quote(text: str) -> str:
    """Render `text` as Go's `%q` does, so error texts match upstream byte for byte.

    post: __return__.startswith('"') and __return__.endswith('"')
    """
    return '"' + "".join(_go_escape(char) for char in text) + '"'


def _go_escape(char: str) -> str:
    if char in _GO_ESCAPES:
        return _GO_ESCAPES[char]
    if char.isprintable():
        return char
    code = ord(char)
    if code < 0x80:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"
