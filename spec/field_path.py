"""Field paths as upstream's validation errors spell them (apimachinery's `field.Path`).

A path is a tuple of parts: a field name (`.name`, no dot at the start), a
list index (`[0]`) or a map key (`[key]`, `Key`).  Kept as parts rather than
text so that a reader can prefix a path (a plugin's args sit under
`profiles[0].pluginConfig[1].args`) and find the value it names in a file.
"""

from __future__ import annotations

import attrs


@attrs.frozen
class Key:
    """A map key on a path (`field.Path.Key`): a selector value's label key, `values[0][zone]`."""

    name: str


Part = str | int | Key
Path = tuple[Part, ...]


def field_name(path: Path) -> str:
    """`profiles[0].plugins.score`: `path` spelled as upstream's field errors spell it."""
    text = ""
    for part in path:
        if isinstance(part, Key):
            text += f"[{part.name}]"
        elif isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else part
    return text
