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

import shutil
import sys
from collections import Counter
from pathlib import Path

import pytest

import memviz
from memviz.cli import main
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
    """Counts of alignments, fits and encodings by the rows they read; ``"fit train (used)"``: the encoders
    fitted on the training rows that encode rows as fitted (or a copy of one: same arrays, same vocabulary),
    ``"encode X by the training encoder"``: the encodings of X by such an encoder (the DCR share's encoders
    take the training rows' scale but the hold-out's vocabulary: other encoders)."""
    n = Counter()
    align_to, fit, transform = align.align_to, encoding.Encoder.fit.__func__, encoding.Encoder.transform
    on_train, used = [], set()

    def counted_align(frame, *a, **k):
        n["align " + names.get(len(frame), "other")] += 1
        return align_to(frame, *a, **k)

    def counted_fit(cls, df, *a, **k):
        n["fit " + names.get(len(df), "other")] += 1
        enc = fit(cls, df, *a, **k)
        if names.get(len(df)) == "train":
            on_train.append(enc)
        return enc

    def counted_transform(self, df):
        n["encode " + names.get(len(df), "other")] += 1
        if any(self.means is e.means and self.vocab == e.vocab for e in on_train):   # a copy keeps the arrays
            n["encode " + names.get(len(df), "other") + " by the training encoder"] += 1
            if id(self.means) not in used:
                used.add(id(self.means))
                n["fit train (used)"] += 1
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


@pytest.mark.parametrize("distance", ["paper", "standardized"])
def test_one_audit_fits_the_training_encoder_once_and_encodes_each_table_once_with_it(monkeypatch, distance):
    """The audit's door encodes the three tables once (memviz.engine.encoded.EncodedTables); every engine on the
    training rows and the hold-out's check take those arrays. Before: that encoder encoded the training rows 4
    times (the audit's engine, the closeness engine beside it, the leave-one-out search, the hold-out's check),
    the generated rows 2 and the hold-out 3.

    The training encoder is fitted once per audit, whatever the distance: the DCR share's engines take its scale
    (``fit(ref, scale_table=train, encoded=...)``) and its balanced subsample of the training rows (220 rows,
    counted as "holdout" by its length) reads its own vocabulary and arrays from the training rows' codes
    (:meth:`memviz.engine.encoded.EncodedTables.subset`). Before (a7e18e1): 3 fits on the training rows (the
    audit's, the DCR share's two scales) and 2 on 220 rows (the subsample's vocabulary, the hold-out's)."""
    train, syn, hold = _tables()
    n = _counting(monkeypatch, {len(train): "train", len(syn): "synthetic", len(hold): "holdout"})
    memviz.audit(train, syn, hold, distance=distance)
    assert n["fit train"] == n["fit train (used)"] == 1                  # it was 3
    by_train = {f"encode {t} by the training encoder": 1 for t in ("train", "synthetic", "holdout")}
    assert {k: n[k] for k in by_train} == by_train                    # it was 4, 2, 3
    # the engines on other references fit their own: the generated rows' 4 (the membership and attribute
    # attacks, the linkability test's two halves), the hold-out's vocabulary for the DCR share's test reference
    # (EncodedTables' docstring says why each stays)
    pinned = {"fit train": 1, "fit synthetic": 4, "fit holdout": 1,
              "encode train": 2, "encode synthetic": 7, "encode holdout": 7}     # it was 3, 4, 2 fits; 2, 7, 8
    assert {k: n[k] for k in pinned} == pinned


def test_the_audit_command_aligns_the_synthetic_table_once(monkeypatch, tmp_path):
    """``memviz audit`` reads and aligns the generated rows once and hands them to the audit as they are
    (:func:`memviz.verdict.inputs.generated_inputs`); before, the command aligned them and the audit again."""
    train, syn, hold = _tables()
    paths = {}
    for name, df in (("train", train), ("synthetic", syn), ("holdout", hold)):
        paths[name] = tmp_path / f"{name}.csv"
        df.to_csv(paths[name], index=False)
    n = _counting(monkeypatch, {len(train): "train", len(syn): "synthetic", len(hold): "holdout"})
    code = main(["audit", "--train", str(paths["train"]), "--synthetic", str(paths["synthetic"]),
                 "--holdout", str(paths["holdout"]), "--out", str(tmp_path / "out"), "--quiet"])
    assert code == 0 and (tmp_path / "out" / "audit.json").is_file()
    assert (n["align synthetic"], n["align holdout"]) == (1, 1)        # the synthetic table: it was 2
    assert n["fit train (used)"] == 1
    assert all(n[f"encode {t} by the training encoder"] == 1 for t in ("train", "synthetic", "holdout"))


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


@pytest.mark.parametrize("given", [False, True], ids=["kept hold-out", "hold-out given"])
def test_the_audit_of_a_run_fits_the_training_encoder_once_and_encodes_each_table_once(monkeypatch, tmp_path,
                                                                                       given):
    """``Audit.from_run`` (the demo run: 3,000 training rows, a check of 3,000 generated rows, the 1,000 hold-out
    rows it kept, or the sample's 1,000 test rows given; the tests on other references left out, so every fit on
    3,000 rows is the training encoder's) encodes its tables once too. Before: that encoder was fitted twice (the
    closeness engine's, the hold-out's check or the given hold-out's floor) and encoded the 3,000-row tables 4
    times (5 with a hold-out given), the hold-out 2 (3)."""
    root = Path(__file__).resolve().parents[2] / "sample_data"
    run = next((root / "demo").glob("*-warmup-*"))
    shutil.copytree(run, tmp_path / run.name)
    n = _counting(monkeypatch, {3000: "train", 1000: "holdout"})
    a = memviz.Audit.from_run(tmp_path / run.name, holdout=root / "test.csv" if given else None, evidence=False,
                              dcr=False, quality=False)
    assert (a.provenance.n_train, a.provenance.n_synthetic, a.provenance.n_holdout) == (3000, 3000, 1000)
    assert n["fit train"] == n["fit train (used)"] == 1                                        # it was 2
    # the training and the generated rows (3,000 each) once each, the hold-out once
    assert (n["encode train by the training encoder"], n["encode holdout by the training encoder"]) == (2, 1)
