"""User text cannot reverse the figures beside it (issue 41, item 6).

At e9efb32 a column named with a RIGHT-TO-LEFT OVERRIDE (U+202E) showed the other columns' figures
reversed in the audit's report ("95.2" as "2.59"): the report escaped HTML but left the override open.
"""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memviz.text import BIDI_CONTROLS, PDI, inert, isolate

OPENS = {"\u2066", "\u2067", "\u2068"}
RLO = "\u202e"


def open_controls(text: str) -> list[int]:
    """Positions of directional controls that act on what follows the text: outside every isolate, or an
    isolate that is never closed."""
    bad, depth = [], 0
    for i, c in enumerate(text):
        if c in OPENS:
            depth += 1
        elif c == PDI:
            if depth == 0:
                bad.append(i)
            else:
                depth -= 1
        elif c in BIDI_CONTROLS and depth == 0:
            bad.append(i)
    return bad + ([len(text)] if depth else [])


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(sorted(BIDI_CONTROLS) + list("ab1 2"))))
def test_isolated_text_leaves_no_control_acting_beyond_it(text):
    out = isolate(text)
    assert open_controls("x" + out + "95.2") == []
    assert [c for c in out if c not in BIDI_CONTROLS] == [c for c in text if c not in BIDI_CONTROLS]
    if not any(c in BIDI_CONTROLS for c in text):
        assert out == text


def test_inert_isolates():
    assert open_controls(inert(f"age{RLO}") + " 95.2") == []


@pytest.fixture(scope="module")
def bidi_audit(sample):
    import memviz
    from memviz.tables.data import table_from_frame

    train, test = sample
    name = f"race{RLO}"
    schema = train.schema.with_overrides({})
    cols = {"race": name}
    from dataclasses import replace

    schema = replace(schema, categorical=tuple(cols.get(c, c) for c in schema.categorical))

    def frame(df):
        df = df.rename(columns=cols).reset_index(drop=True)
        df[name] = df[name].replace({"White": f"White{RLO}"})       # a category value with an override too
        return df
    tr = table_from_frame(frame(train.data.head(600)), schema, source="t")
    ho = table_from_frame(frame(test.data.head(300)), schema, source="h")
    syn = table_from_frame(frame(train.data.head(200)), schema, source="s")
    return memviz.audit(tr, syn, ho, quality=False), tr, syn


@pytest.mark.parametrize("redacted", [True, False])
def test_the_report_isolates_a_column_name_with_an_override(bidi_audit, redacted):
    a, tr, syn = bidi_audit
    page = a.to_html(redacted=redacted, train=tr, synthetic=syn)
    assert RLO in page                                                 # the name is shown ...
    assert open_controls(page) == []                                   # ... and acts on nothing beside it
