"""One audit aligns each input table once, and fits and encodes no more than the engines it builds need
(issue 53 item 1: the audit's inputs checked, aligned and encoded once into
:class:`memviz.verdict.inputs.AuditInputs`).

Counted during one ``memviz.audit(train, synthetic, holdout)`` of a credit-like table (300 training, 250
generated, 220 hold-out rows; unseen categories in both other tables), by wrapping the one alignment
(:func:`memviz.tables.align.align_to`), the one encoder fit (:meth:`memviz.tables.encoding.Encoder.fit`) and the
one encoding (:meth:`memviz.tables.encoding.Encoder.transform`), each call named by the rows it reads.

Before (main at 2e04e2f): the synthetic table and the hold-out each aligned **2** times (the builder's reading,
then its ``aligned`` again for the notices; 3 times for the synthetic table through ``memviz audit``, whose
command aligns it before calling ``memviz.audit``); encoders fitted on the training rows 3 times (the audit's
engine, the DCR share's two engines' scale), on the generated rows 6 times (the membership attack's engine, the
attribute attack's, the linkability test's 4) and on the hold-out 2 times (the DCR share's reference); the
training rows encoded 5 times, the generated rows 10, the hold-out 10 (and the training + hold-out rows once).

After: each table aligned once; the linkability test fits its two engines (one per half of the columns) once
and asks each for both sets of targets, so 4 fits on the generated rows instead of 6 (8 encodings instead of
10). The counts of fits and encodings are pinned (exactly these, so a second one fails): the engine's
fit and search encode their own rows (:mod:`memviz.engine` takes tables, not encodings), and the engines on the
generated rows, the DCR share's and the hold-out's are other references with their own encoders.
"""
from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import memviz
from memviz.tables import align, encoding

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from unseen_tables import credit_like  # noqa: E402


def _tables():
    df = credit_like(600, seed=0)
    train, hold = df.iloc[:300].reset_index(drop=True), df.iloc[300:520].reset_index(drop=True)
    syn = credit_like(250, seed=1)
    syn.loc[:4, "Job"] = "contractor"                      # a category the training table does not have
    hold = hold.astype({"Job": object})
    hold.loc[:2, "Job"] = "seasonal"
    return train, syn, hold


def _counting(monkeypatch, names: dict) -> Counter:
    n = Counter()
    align_to, fit, transform = align.align_to, encoding.Encoder.fit.__func__, encoding.Encoder.transform

    def counted_align(frame, *a, **k):
        n["align " + names.get(len(frame), "other")] += 1
        return align_to(frame, *a, **k)

    def counted_fit(cls, df, *a, **k):
        n["fit " + names.get(len(df), "other")] += 1
        return fit(cls, df, *a, **k)

    def counted_transform(self, df):
        n["encode " + names.get(len(df), "other")] += 1
        return transform(self, df)

    monkeypatch.setattr(align, "align_to", counted_align)
    monkeypatch.setattr(encoding.Encoder, "fit", classmethod(counted_fit))
    monkeypatch.setattr(encoding.Encoder, "transform", counted_transform)
    return n


def test_one_audit_aligns_each_table_once(monkeypatch):
    train, syn, hold = _tables()
    n = _counting(monkeypatch, {len(train): "train", len(syn): "synthetic", len(hold): "holdout"})
    a = memviz.audit(train, syn, hold)
    assert n["align synthetic"] == 1                      # it was 2
    assert n["align holdout"] == 1                        # it was 2
    assert n["align train"] == n["align other"] == 0
    notices = a.provenance.notices
    assert sum("'contractor'" in x for x in notices) == 1 and sum("'seasonal'" in x for x in notices) == 1
    pinned = {"fit train": 3, "fit synthetic": 4, "fit holdout": 2,          # synthetic: it was 6
              "encode train": 5, "encode synthetic": 8, "encode holdout": 10}     # synthetic: it was 10
    assert {k: n[k] for k in pinned} == pinned


def test_the_inputs_are_one_frozen_value_made_at_the_door():
    import dataclasses

    from memviz.verdict.inputs import AuditInputs, audit_inputs

    train, syn, hold = _tables()
    inputs = audit_inputs(train, syn, hold)
    assert isinstance(inputs, AuditInputs)
    assert dataclasses.fields(inputs) and inputs.__dataclass_params__.frozen
    assert (len(inputs.train), len(inputs.synthetic), len(inputs.holdout)) == (300, 250, 220)
    assert inputs.synthetic.schema is inputs.train.schema is inputs.holdout.schema
    assert not hasattr(inputs.synthetic.data, "rownames") or list(inputs.synthetic.data.columns) == list(
        inputs.train.schema.columns)
