"""json_text.dumps writes what json.dumps(indent=..., default=...) writes, on generated values."""

import enum
import json
from collections import OrderedDict, namedtuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cudalens import json_text
from cudalens.pipeline.analysis import json_default


class Fact:
    def __init__(self, d):
        self.d = d

    def to_dict(self):
        return self.d


class Kind(enum.IntEnum):
    A = 3


class Name(str):
    pass


Pair = namedtuple("Pair", "a b")

scalars = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True)
           | st.text() | st.sampled_from([Kind.A, Name("n\u00e9\n"), 2**70, -0.0]))
keys = st.text() | st.integers() | st.floats() | st.booleans() | st.none()


def _tree(children):
    return (st.lists(children, max_size=4) | st.lists(children, max_size=3).map(tuple)
            | st.dictionaries(keys, children, max_size=4) | st.frozensets(st.integers(), max_size=3)
            | st.builds(Fact, st.dictionaries(st.text(max_size=3), children, max_size=3))
            | st.builds(Pair, children, children) | st.dictionaries(st.text(), children, max_size=2).map(OrderedDict))


values = st.recursive(scalars, _tree, max_leaves=40)


@settings(max_examples=400, deadline=None)
@given(values, st.sampled_from([1, 2, 4]))
def test_equal_to_json(value, indent):
    assert json_text.dumps(value, indent, json_default) == json.dumps(value, indent=indent, default=json_default)


def test_refusals_as_json():
    with pytest.raises(TypeError, match="not JSON serializable"):
        json_text.dumps({"a": object()}, 2)
    with pytest.raises(TypeError):
        json_text.dumps({(1, 2): 1}, 2)
    loop: list = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular reference"):
        json_text.dumps(loop, 2)
    d: dict = {}
    d["x"] = [d]
    with pytest.raises(ValueError, match="Circular reference"):
        json_text.dumps(d, 2)
