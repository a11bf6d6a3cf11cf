"""Every JSON and YAML document kcache reads, read one way within one set of limits.

Cluster files (`show`, `schedule`), traces, scheduler configurations,
histories, and the adapter protocol's requests and answers all come through
here, so one rule holds for each of them (docs/robustness.md#limits-of-what-kcache-reads):

- at most `MAX_BYTES`, refused before more is read (a FIFO or /dev/zero too);
- UTF-8 text without a byte order mark or NUL, and no lone surrogate in a string;
- objects and lists nested at most `MAX_DEPTH` deep, YAML aliases adding at most
  `MAX_ALIASED` values and never containing themselves;
- keys are strings, each once per object; numbers are finite, non-integers
  exact (`Decimal`), YAML dates the text they are written as, values plain
  data (no YAML tags that build sets, bytes or pairs).

A refusal is one `DocumentError` line naming the source, the line where it is
known, the field, and what was wrong.
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any, BinaryIO

import attrs
import yaml

from kcache.errors import KcacheError

#: deepest nesting of objects and lists: Kubernetes objects nest a few dozen levels at most,
#: and kcache walks values recursively
MAX_DEPTH = 100
#: values YAML aliases may add to a document beyond those written out ("billion laughs")
MAX_ALIASED = 100_000
#: largest input read, file or adapter answer: a cluster of 5,000 nodes and 150,000 pods is
#: far less as JSON, and reading JSON takes about ten times its size in memory
MAX_BYTES = 256 << 20
_TOO_LONG = f"longer than {MAX_BYTES >> 20} MiB, the most kcache reads"
#: Python reads integers of at most this many digits (a guard against quadratic conversion)
_TOO_MANY_DIGITS = (
    f"a number of more than {sys.get_int_max_str_digits()} digits, the most kcache reads"
)
#: bytes read at a time
_CHUNK = 1 << 20
#: byte order marks, longest first (UTF-32's little-endian mark starts with UTF-16's)
_BYTE_ORDER_MARKS = (
    (b"\x00\x00\xfe\xff", "UTF-32BE"),
    (b"\xff\xfe\x00\x00", "UTF-32LE"),
    (b"\xfe\xff", "UTF-16BE"),
    (b"\xff\xfe", "UTF-16LE"),
    (b"\xef\xbb\xbf", "UTF-8"),
)
#: an escape that can write half a surrogate pair (JSON's \uD8xx, YAML's \U0000D8xx too)
_SURROGATE_ESCAPE = re.compile(r"\\(?:u|U0000)[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")
#: an escape of half a pair whose other half does not follow or come before it
_LONE_SURROGATE_ESCAPE = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])"
    r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)
#: a JSON string, or a bracket outside one
_JSON_BRACKETS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)
_MERGE_TAG = "tag:yaml.org,2002:merge"


class DocumentError(KcacheError, ValueError):
    """A text kcache refuses to read: the source, the line where known, the field, what."""

    def __init__(
        self,
        source: str,
        problem: str,
        *,
        line: int | None = None,
        column: int | None = None,
        field: str = "",
    ) -> None:
        self.source, self.problem, self.line, self.field = source, problem, line, field
        at = f"line {line}" + (f", column {column}" if column else "") if line else ""
        parts = [source, *([at] if at else []), *([field] if field else []), problem]
        super().__init__(": ".join(parts))


@attrs.frozen
class Document:
    """One decoded document of a text, with where it came from."""

    value: Any
    #: the source, with the document's number when the text holds several
    where: str
    #: the line the document starts on
    line: int


# -- bytes to text ------------------------------------------------------------------------------


def read_file(path: str | Path) -> str:
    """The text of a file (named by its path in errors), within `MAX_BYTES`, as UTF-8."""
    try:
        with open(path, "rb") as file:
            status = os.fstat(file.fileno())
            if stat.S_ISCHR(status.st_mode) or stat.S_ISBLK(status.st_mode):
                # /dev/zero would be read to the limit for nothing: no device holds a document
                raise DocumentError(str(path), "cannot read: is a device, not a file")
            if status.st_size > MAX_BYTES:  # a regular file says at once
                raise DocumentError(str(path), _TOO_LONG)
            return read_stream(file, str(path))
    except OSError as error:
        raise DocumentError(str(path), f"cannot read: {error.strerror or error}") from None


def read_stream(stream: BinaryIO, source: str) -> str:
    """The text of a binary stream, refused once it passes `MAX_BYTES` (never read further)."""
    data = bytearray()
    while chunk := stream.read(_CHUNK):
        data += chunk
        if len(data) > MAX_BYTES:
            raise DocumentError(source, _TOO_LONG)
    return decode(data, source)


def decode(data: bytes | bytearray, source: str) -> str:
    """`data` as UTF-8 text: a byte order mark, an invalid byte or a NUL is refused."""
    for mark, encoding in _BYTE_ORDER_MARKS:
        if data.startswith(mark):
            raise DocumentError(
                source,
                f"starts with a {encoding} byte order mark: kcache reads UTF-8 without one "
                f"(iconv -f {encoding.removesuffix('BE').removesuffix('LE')} -t UTF-8, "
                "then remove the mark)",
                line=1,
            )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise DocumentError(
            source, f"byte 0x{data[error.start]:02x} is not UTF-8 text", line=line
        ) from None
    nul = text.find("\0")
    if nul >= 0:
        raise DocumentError(
            source,
            "holds a NUL character: kcache reads UTF-8 text (is it UTF-16, or not text?)",
            line=text.count("\n", 0, nul) + 1,
        )
    return text


# -- text to values -----------------------------------------------------------------------------


def parse_json(text: str, source: str, *, line: int = 1) -> Any:
    """One JSON document (a `.json` file, a `.jsonl` line starting on `line`, an answer)."""
    try:
        value = json.loads(
            text, parse_float=Decimal, parse_constant=_refuse_constant, object_pairs_hook=_pairs
        )
    except RecursionError:
        raise _json_too_deep(text, source, line) from None
    except json.JSONDecodeError as error:
        raise DocumentError(
            source,
            f"invalid JSON: {error.msg}",
            line=line + error.lineno - 1,
            column=error.colno,
        ) from None
    except _Refused as refused:
        field, at = _locate(text, refused.find)
        raise DocumentError(
            source, refused.problem, line=None if at is None else line + at - 1, field=field
        ) from None
    except ValueError:  # an integer longer than Python reads
        field, at = _locate(text, _long_number)
        raise DocumentError(
            source, _TOO_MANY_DIGITS, line=None if at is None else line + at - 1, field=field
        ) from None
    if _may_break_a_rule(text):
        _check(value, text, source, offset=line - 1, start=line)
    return value


def _may_break_a_rule(text: str) -> bool:
    """Whether a JSON text may hold a value `_check` refuses, told from the text alone.

    JSON's values can break two of the rules only: nesting deeper than
    `MAX_DEPTH`, which takes more opening brackets than that, and lone
    surrogates, which JSON text holds only as escapes.  Most adapter answers
    have neither, and their walk was a third of reading them.
    """
    return text.count("{") + text.count("[") > MAX_DEPTH or bool(_SURROGATE_ESCAPE.search(text))


def parse_json_lines(text: str, source: str) -> list[Document]:
    """One JSON document per non-blank line; lines end at "\\n" only (U+2028 is a character)."""
    return [
        Document(parse_json(part, source, line=number), f"{source}:{number}", number)
        for number, part in enumerate(text.split("\n"), 1)
        if part.strip()
    ]


def parse_yaml(text: str, source: str) -> list[Document]:
    """Every non-empty YAML document of a text (JSON is YAML too), in order."""
    documents: list[tuple[Any, int]] = []
    try:
        loader = _Loader(text)
    except yaml.reader.ReaderError as error:  # a character YAML does not allow
        raise DocumentError(
            source,
            f"invalid YAML: character #x{error.character:04x} is not allowed",
            line=text.count("\n", 0, error.position) + 1,
        ) from None
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                continue
            _check_aliases(node)
            value = loader.construct_document(node)
            if value is not None:  # an empty document
                documents.append((value, node.start_mark.line + 1))
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        problem = error.problem or error.context or ""
        if type(error) is not yaml.MarkedYAMLError:  # PyYAML's own, not one of kcache's rules
            problem = f"invalid YAML: {problem}"
        raise DocumentError(
            source,
            problem,
            line=mark.line + 1 if mark else None,
            column=mark.column + 1 if mark else None,
        ) from None
    except (yaml.YAMLError, ValueError) as error:
        raise DocumentError(source, f"invalid YAML: {_reason(error)}") from None
    finally:
        loader.dispose()
    several = len(documents) > 1
    result = []
    for number, (value, line) in enumerate(documents, 1):
        _check(value, text, source, document=number - 1, start=line)
        where = f"{source}: document {number}" if several else source
        result.append(Document(value, where, line))
    return result


def parse_any(text: str, source: str) -> list[Document]:
    """A cluster file's documents: JSON when the text starts as JSON does, else YAML."""
    if text.lstrip().startswith(("{", "[")):
        return [Document(parse_json(text, source), source, 1)]
    return parse_yaml(text, source)


def line_of(text: str, document: int, path: tuple[object, ...]) -> int | None:
    """The line the value at `path` of document `document` (from 0) starts on, if found."""
    for node_path, node in _nodes(text, document):
        if node_path == path:
            return node.start_mark.line + 1
    return None


# -- the rules every value keeps ------------------------------------------------------------------


def _check(
    value: Any, text: str, source: str, *, document: int = 0, offset: int = 0, start: int = 1
) -> None:
    """DocumentError naming the field of the first value that breaks a rule.

    `text` holds the value as document `document`; its lines are numbered
    from `offset` + 1; `start` is the line the document starts on.
    """
    strings = _SURROGATE_ESCAPE.search(text) is not None
    found = _first_problem(value, strings)
    if found is None:
        return
    path, problem = found
    if problem.startswith("nested") and text.lstrip().startswith(("{", "[")):
        deep = _json_too_deep(text, source, offset + 1)
        raise DocumentError(source, deep.problem, line=deep.line, field=_field(path))
    at = line_of(text, document, path)
    if at is None and "surrogate" in problem:  # libyaml, which finds lines, refuses them too
        lone = _LONE_SURROGATE_ESCAPE.search(text)
        at = None if lone is None else text.count("\n", 0, lone.start()) + 1
    line = start if at is None else offset + at
    raise DocumentError(source, problem, line=line, field=_field(path))


def _first_problem(value: Any, strings: bool) -> tuple[tuple[str | int, ...], str] | None:
    """The path and problem of the first value out of bounds, walked without recursion.

    Only objects and lists are stacked, each with its depth and a link to its
    parent's path (a pair, made in constant time): the path is spelled out
    only for the value refused.
    """
    if not isinstance(value, dict | list):
        problem = _scalar_problem(value, strings)
        return None if problem is None else ((), problem)
    stack: list[tuple[Any, int, Any]] = [(value, 1, None)]
    while stack:
        item, depth, link = stack.pop()
        if depth > MAX_DEPTH:
            return _path(link), f"nested deeper than {MAX_DEPTH} levels"
        is_object = isinstance(item, dict)
        for key, child in item.items() if is_object else enumerate(item):
            if is_object and (type(key) is not str or (strings and _SURROGATE.search(key))):
                problem = (
                    f"key {key!r} holds a lone surrogate, which is not text"
                    if isinstance(key, str)
                    else f"key {_shown(key)}: a key must be a string, got {_kind(key)}"
                )
                return _path(link), problem
            kind = type(child)
            if kind is dict or kind is list:
                stack.append((child, depth + 1, (link, key)))
            elif kind is int or kind is bool or child is None or (kind is str and not strings):
                continue
            else:
                problem = _scalar_problem(child, strings)
                if problem is not None:
                    return _path((link, key)), problem
    return None


def _scalar_problem(value: Any, strings: bool) -> str | None:
    if isinstance(value, str):
        if strings and _SURROGATE.search(value):
            return "holds a lone surrogate (\\ud800 to \\udfff alone), which is not text"
        return None
    if isinstance(value, Decimal):
        return None if value.is_finite() else f"{value} is not a number JSON allows"
    if isinstance(value, int) or value is None:  # booleans too
        return None
    return f"{_kind(value)} is not JSON data (YAML tags are not read)"


def _path(link: Any) -> tuple[str | int, ...]:
    """The path a chain of (parent, key) links spells, from the root."""
    keys: list[str | int] = []
    while link is not None:
        link, key = link
        keys.append(key)
    return tuple(reversed(keys))


def _field(path: tuple[str | int, ...]) -> str:
    if len(path) > 12:
        return f"{_field(path[:6])}...{_field(path[-2:])}"
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else ("." if text else "") + str(part)
    return text


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | Decimal):
        return "a number"
    if isinstance(value, dict | list | tuple):
        return "an object or list"
    return f"a {type(value).__name__}"


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _reason(error: BaseException) -> str:
    return " ".join(str(error).split())


# -- JSON's details -------------------------------------------------------------------------------


class _Refused(Exception):  # noqa: N818  (an internal signal: the JSON decoder unwinds through it)
    """A value the JSON decoder met that kcache refuses; `find` finds its node."""

    def __init__(self, problem: str, find: Any) -> None:
        super().__init__(problem)
        self.problem, self.find = problem, find


def _refuse_constant(name: str) -> Any:
    raise _Refused(
        f"{name} is not a number JSON allows",
        lambda node: node if isinstance(node, yaml.ScalarNode) and node.value == name else None,
    )


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) < len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Refused(f"key {key!r} appears twice in one object", _twice(key))
            seen.add(key)
    return result


def _twice(key: str) -> Any:
    """The second key `key` of the first object that holds it twice."""

    def second(node: yaml.Node) -> yaml.Node | None:
        if not isinstance(node, yaml.MappingNode):
            return None
        keys = [item for item, _ in node.value if getattr(item, "value", None) == key]
        return keys[1] if len(keys) > 1 else None

    return second


def _long_number(node: yaml.Node) -> yaml.Node | None:
    long = isinstance(node, yaml.ScalarNode) and len(node.value) > sys.get_int_max_str_digits()
    return node if long else None


def _json_too_deep(text: str, source: str, first_line: int) -> DocumentError:
    """The refusal of a JSON text nested too deep, at the line where it passes the limit."""
    at = _too_deep_at(text)
    line = None if at is None else first_line + text.count("\n", 0, at)
    return DocumentError(source, f"nested deeper than {MAX_DEPTH} levels", line=line)


def _too_deep_at(text: str) -> int | None:
    """Where a JSON text's brackets (outside strings) first nest past the limit, if they do."""
    depth = 0
    for match in _JSON_BRACKETS.finditer(text):
        bracket = match.group()
        depth += bracket in "[{"
        depth -= bracket in "]}"
        if depth > MAX_DEPTH:
            return match.start()
    return None


def _locate(text: str, find: Any) -> tuple[str, int | None]:
    """The field and line of the first node where `find` finds one (JSON read as YAML)."""
    for path, node in _nodes(text, 0):
        found = find(node)
        if found is not None:
            return _field(path), found.start_mark.line + 1
    return "", None


def _nodes(text: str, document: int) -> Iterator[tuple[tuple[str | int, ...], yaml.Node]]:
    """The nodes of a document (only when nested within the limit) with their paths, in order.

    The text is composed again, keeping positions; JSON is read as YAML here.
    Nothing is yielded when that reading fails: the line is then not known.
    """
    if _too_deep_at(text) is not None:
        return
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        for number, root in enumerate(yaml.compose_all(text, Loader=loader)):
            if number == document and root is not None:
                yield from _walk(root)
                return
    except (yaml.YAMLError, RecursionError, ValueError):
        return


def _walk(root: yaml.Node) -> Iterator[tuple[tuple[str | int, ...], yaml.Node]]:
    stack: list[tuple[tuple[str | int, ...], yaml.Node]] = [((), root)]
    while stack:
        path, node = stack.pop()
        yield path, node
        if isinstance(node, yaml.MappingNode):
            children = [((*path, str(key.value)), value) for key, value in node.value]
        elif isinstance(node, yaml.SequenceNode):
            children = [((*path, index), item) for index, item in enumerate(node.value)]
        else:
            continue
        if len(path) < MAX_DEPTH:
            stack.extend(reversed(children))


# -- YAML's details -------------------------------------------------------------------------------


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader with kcache's rules: nesting refused as it is composed, keys
    checked with their line, exact decimals, dates as written."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        event = self.peek_event()  # type: ignore[no-untyped-call]
        if not isinstance(event, yaml.CollectionStartEvent):
            return super().compose_node(parent, index)
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise _marked(f"nested deeper than {MAX_DEPTH} levels", event.start_mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        if isinstance(node, yaml.MappingNode):
            seen: set[str] = set()
            for key_node, _ in node.value:
                if key_node.tag == _MERGE_TAG:
                    continue
                key = self.construct_object(key_node, deep=True)
                if not isinstance(key, str):
                    quoted = isinstance(key_node, yaml.ScalarNode)
                    hint = f' (quote it: "{key_node.value}")' if quoted else ""
                    raise _marked(
                        f"key {_shown(key)}: a key must be a string, got {_kind(key)}{hint}",
                        key_node.start_mark,
                    )
                if key in seen:
                    raise _marked(f"key {key!r} appears twice in one object", key_node.start_mark)
                seen.add(key)
        return super().construct_mapping(node, deep)


def _marked(problem: str, mark: Any) -> yaml.MarkedYAMLError:
    return yaml.MarkedYAMLError(problem=problem, problem_mark=mark)


def _check_aliases(root: yaml.Node) -> None:
    """Refuse a composed document that contains itself, or is expanded too far by aliases."""
    sizes: dict[int, int] = {}
    depths: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, finished = stack.pop()
        children = _children(node)
        if finished:
            sizes[id(node)] = 1 + sum(sizes[id(child)] for child in children)
            depths[id(node)] = (
                1 + max((depths[id(child)] for child in children), default=0)
                if isinstance(node, yaml.CollectionNode)
                else 0
            )
            on_path.discard(id(node))
            if depths[id(node)] > MAX_DEPTH:
                raise _marked(
                    f"nested deeper than {MAX_DEPTH} levels once its aliases are expanded",
                    node.start_mark,
                )
            continue
        if id(node) in sizes:
            continue
        if id(node) in on_path:
            raise _marked(
                "an alias refers to a node that contains it (a recursive value)", node.start_mark
            )
        on_path.add(id(node))
        stack.append((node, True))
        stack.extend((child, False) for child in children if id(child) not in sizes)
    aliased = sizes[id(root)] - len(sizes)
    if aliased > MAX_ALIASED:
        raise _marked(
            f"aliases expand it by {aliased} values (at most {MAX_ALIASED}): "
            "write the values out, or use fewer aliases",
            root.start_mark,
        )


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [item for pair in node.value for item in pair]
    return []


def _exact_float(loader: yaml.SafeLoader, node: yaml.Node) -> Decimal:
    text = str(loader.construct_scalar(node)).replace("_", "")  # type: ignore[arg-type]
    try:
        number = Decimal(text)
    except ArithmeticError:
        raise _marked(f"{text!r} is not a number kcache reads", node.start_mark) from None
    if not number.is_finite():
        raise _marked(f"{text} is not a number JSON allows", node.start_mark)
    return number


def _integer(loader: yaml.SafeLoader, node: yaml.Node) -> int:
    try:
        return yaml.SafeLoader.construct_yaml_int(loader, node)  # type: ignore[arg-type]
    except ValueError:  # longer than Python reads
        raise _marked(_TOO_MANY_DIGITS, node.start_mark) from None


def _as_written(loader: yaml.SafeLoader, node: yaml.Node) -> str:
    return str(loader.construct_scalar(node))  # type: ignore[arg-type]


_Loader.add_constructor("tag:yaml.org,2002:float", _exact_float)
_Loader.add_constructor("tag:yaml.org,2002:int", _integer)
_Loader.add_constructor("tag:yaml.org,2002:timestamp", _as_written)
