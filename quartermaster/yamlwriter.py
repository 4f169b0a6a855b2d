"""The one YAML writer for every file Quartermaster emits (Kueue objects, Kueue's Configuration, the PrometheusRule
and rules file, Google Managed Prometheus Rules, the dashboard ConfigMap, the RayJob).

Documents are plain dicts, lists and scalars; keys are written sorted, so a file is byte-identical across runs and a
PR diff shows only what changed. A string is written plain only when every YAML reader takes it back as that same
string: PyYAML's YAML 1.1 resolver decides for Python's readers, and a stricter rule covers Kubernetes' reader
(sigs.k8s.io/yaml over go-yaml), which also reads `0800`, `1e3`, `0x1F`, `y` and `n` as numbers or booleans. Any
other string is written JSON-quoted (valid YAML), or, when it spans lines, as a literal block (`|`) that a person
can read (PromQL expressions, the dashboard's JSON).
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

import yaml

_RESOLVER = yaml.resolver.Resolver()
_PLAIN_SAFE = re.compile(r"^[A-Za-z0-9_.][A-Za-z0-9_./ -]*$")
_STR_TAG = "tag:yaml.org,2002:str"

# Plain scalars that some YAML reader takes for something else than the string: YAML 1.2's numbers (`1e3`,
# `0o17`), numbers with leading zeros (`0800`, which Go's YAML libraries, and so kubectl, read as a number), and
# YAML 1.1's one-letter booleans (`y`, `n`). PyYAML's 1.1 resolver catches the rest (`yes`, `on`, `~`, `1_000`).
_READ_AS_NUMBER_OR_BOOL = re.compile(r"[-+]?\.?[0-9].*|[yYnN]|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)")

# Characters a YAML stream may not hold (YAML 1.2 section 5.1, c-printable), and NEL, which a reader takes for a line
# break: JSON escapes C0 controls but writes DEL, C1 controls and non-characters raw, and a YAML reader refuses them.
_NOT_PRINTABLE = re.compile("[^\t\n\r\x20-\x7e\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
# What a literal block cannot carry unchanged: other line breaks (CR, NEL, LS, PS), a byte-order mark, tabs, and
# any character outside c-printable.
_NOT_IN_BLOCK = re.compile("[^\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")


def dump_yaml(document: dict[str, Any]) -> str:
    """One document (a rules file, a Configuration)."""
    lines: list[str] = []
    _emit_mapping(document, "", lines)
    return "\n".join(lines) + "\n"


def dump_documents(documents: list[dict[str, Any]]) -> str:
    """Several documents, each after `---` (Kubernetes manifests for `kubectl apply -f`)."""
    lines: list[str] = []
    for document in documents:
        lines.append("---")
        _emit_mapping(document, "", lines)
    return "\n".join(lines) + "\n" if lines else ""


@lru_cache(maxsize=65536)
def _string(text: str) -> str:
    plain = (
        _PLAIN_SAFE.match(text) is not None
        and not text.endswith(" ")
        and ": " not in text
        and " #" not in text
        and not _READ_AS_NUMBER_OR_BOOL.fullmatch(text)
        and _RESOLVER.resolve(yaml.ScalarNode, text, (True, False)) == _STR_TAG
    )
    if plain:
        return text
    return _NOT_PRINTABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(text, ensure_ascii=False))


def _block(text: str, pad: str) -> list[str] | None:
    """`text` as a literal block's lines (header first, `|` or `|-`), or None when a block would not read back
    the same: it must start with a non-space, end with at most one line break, and no line may end in a space."""
    body = text.removesuffix("\n")
    lines = body.split("\n")
    if (
        len(lines) < 2
        or not body[:1].strip()
        or body.endswith("\n")
        or _NOT_IN_BLOCK.search(body)
        or any(line != line.rstrip(" ") for line in lines)
    ):
        return None
    indent = pad + "  "
    return ["|" if text.endswith("\n") else "|-", *(indent + line if line else "" for line in lines)]


def _scalar(value: Any) -> str:
    if isinstance(value, str):
        return _string(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return json.dumps(value)
    if isinstance(value, dict):
        return "{}"
    if isinstance(value, list):
        return "[]"
    raise TypeError(f"cannot write {type(value).__name__} as YAML")


def _emit_mapping(mapping: dict[str, Any], pad: str, lines: list[str]) -> None:
    for key in sorted(mapping):
        value = mapping[key]
        name = _string(str(key))
        if isinstance(value, dict) and value:
            lines.append(f"{pad}{name}:")
            _emit_mapping(value, pad + "  ", lines)
        elif isinstance(value, list) and value:
            lines.append(f"{pad}{name}:")
            _emit_sequence(value, pad, lines)
        elif isinstance(value, str) and "\n" in value and (block := _block(value, pad)) is not None:
            lines.append(f"{pad}{name}: {block[0]}")
            lines.extend(block[1:])
        else:
            lines.append(f"{pad}{name}: {_scalar(value)}")


def _emit_sequence(items: list[Any], pad: str, lines: list[str]) -> None:
    for item in items:
        if isinstance(item, dict) and item:
            start = len(lines)
            _emit_mapping(item, pad + "  ", lines)
            lines[start] = f"{pad}- {lines[start][len(pad) + 2 :]}"
        elif isinstance(item, list) and item:
            start = len(lines)
            _emit_sequence(item, pad + "  ", lines)
            lines[start] = f"{pad}- {lines[start][len(pad) + 2 :]}"
        elif isinstance(item, str) and "\n" in item and (block := _block(item, pad)) is not None:
            lines.append(f"{pad}- {block[0]}")
            lines.extend(block[1:])
        else:
            lines.append(f"{pad}- {_scalar(item)}")
