"""The Prometheus client's limits on an answer's shape, checked against plain reference readings: how deep a JSON
text nests (brackets inside strings and escaped quotes do not count, wherever the text is cut into reads), and that
the credentials a header cannot carry are refused without being shown."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from quartermaster.errors import UsageError
from quartermaster.modules.observability.prometheus import _Nesting, auth_header


def depth_by_walking(text: str) -> int:
    """The reference: character by character, the deepest count of open brackets outside strings."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


TRICKY = st.text(alphabet='[]{}"\\\\ab', max_size=12)
"""Strings of brackets, quotes and backslashes: json.dumps escapes them, the scanner must see through it."""
JSON = st.recursive(
    st.none() | st.integers() | TRICKY,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TRICKY, inner, max_size=4),
    max_leaves=30,
)


@given(JSON, st.lists(st.integers(min_value=1, max_value=40), max_size=8))
def test_nesting_is_the_depth_of_the_text_wherever_it_is_cut(value: object, cuts: list[int]) -> None:
    data = json.dumps(value).encode()
    nesting, at, deepest = _Nesting(limit=16), 0, 0
    for size in [*cuts, len(data)]:
        deepest = max(deepest, nesting.deepest(data[at : at + size]))
        at += size
    assert deepest == depth_by_walking(data.decode())
    assert nesting.depth == 0 and not nesting.in_string


def test_a_run_of_backslashes_across_a_cut_still_escapes_the_quote() -> None:
    # the string holds \\\" (an escaped backslash, then an escaped quote) and a bracket: all of it is text
    data = b'["a\\\\\\"[[[", [1]]'
    for cut in range(1, len(data)):
        nesting = _Nesting(limit=16)
        assert max(nesting.deepest(data[:cut]), nesting.deepest(data[cut:])) == 2, cut


@pytest.mark.parametrize(
    "environ",
    [
        {"QM_PROMETHEUS_TOKEN": "abc\ndef"},  # a line break would end the header: a second header injected
        {"QM_PROMETHEUS_TOKEN": "abc def"},  # a space: a token is one word
        {"QM_PROMETHEUS_TOKEN": "abcé"},  # not ASCII: http.client refuses it with the value in its message
        {"QM_PROMETHEUS_USER": "qm:admin", "QM_PROMETHEUS_PASSWORD": "pw"},  # basic auth splits at the first colon
        {"QM_PROMETHEUS_USER": "qm", "QM_PROMETHEUS_PASSWORD": "pw\r\n"},
    ],
)
def test_credentials_a_header_cannot_carry_are_refused_unshown(environ: dict[str, str]) -> None:
    with pytest.raises(UsageError) as refused:
        auth_header(environ)
    message = str(refused.value)
    assert "Its value is not shown" in message
    assert not any(value.strip() in message for value in environ.values())


def test_a_token_of_the_allowed_characters_is_sent_as_it_is() -> None:
    assert auth_header({"QM_PROMETHEUS_TOKEN": "eyJh.b-c_d~e+f/g=="}) == "Bearer eyJh.b-c_d~e+f/g=="
