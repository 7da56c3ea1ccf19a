"""memviz.audit: its figures, its verdict and its outputs on small tables made to know the answer."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from helpers import near_copies

import memviz
from memviz.auditing.json_schema import validate
from memviz.errors import MemvizError
from memviz.measure.floor import excess, holdout_floor, newcombe_interval
from memviz.measure.memorization import memorization
from memviz.tables.schema import Schema


def test_the_function_and_the_package_are_both_reachable():
    from memviz.auditing.result import Audit, audit

    assert memviz.audit is audit and callable(memviz.audit)
    assert memviz.Audit is Audit and memviz.audit.from_run is Audit.from_run
    assert "audit" in memviz.__all__ and "Audit" in memviz.__all__


def test_fresh_rows_are_no_copying(fresh_split, fresh_audit):
    tr, ho, fresh = fresh_split
    a = fresh_audit
    assert a.verdict.code == "no_copying" and a.verdict.tone == "good"
    assert a.n_over_copied == 0 and not a.rows["over_copied"].any()
    assert a.excess_ci[0] <= 0 <= a.excess_ci[1] and a.copy_share_ci[0] <= 0 <= a.copy_share_ci[1]
    assert a.row_test.status in ("exact", "low_power") and a.family.holding == ()
    assert a.close.p_too_close > 0.01 and a.close.p_identical > 0.01
    # the same figures as the five modules it composes
    res = memorization(tr, fresh)
    fl = holdout_floor(tr, ho)
    ex = excess(res.mem_ratio, len(fresh), fl)
    assert a.mem_ratio == pytest.approx(res.mem_ratio) and a.floor == fl.floor and a.excess == pytest.approx(ex.excess)
    assert a.excess_ci == pytest.approx(ex.ci) and a.floor_ci == pytest.approx(fl.ci)
    assert a.copy_share == pytest.approx(ex.excess / (1 - fl.floor))
    assert a.rows["copies"].sum() == res.memorized.sum() and len(a.rows) == len(tr)
    p = a.provenance
    assert (p.n_train, p.n_synthetic, p.n_holdout) == (800, 600, 400) and p.run is None
    assert all(len(p.fingerprints[k]) == 64 for k in ("train", "synthetic", "holdout"))
    assert a.shape is not None and a.shape_reference is not None and a.shape > 0.8


def test_planted_copies_raise_the_excess_by_the_planted_share_and_name_their_sources(fresh_split, fresh_audit,
                                                                                      planted):
    tr, ho, fresh = fresh_split
    syn, sources, where = planted
    a = memviz.audit(tr, syn, ho)
    share = len(where) / len(syn)                                            # 0.30
    assert a.verdict.code == "copying"
    # replacing fresh rows (flagged at about the floor) by copies (always flagged) adds share × (1 − floor)
    assert a.excess - fresh_audit.excess == pytest.approx(share * (1 - fresh_audit.floor), abs=0.04)
    assert a.copy_share == pytest.approx(share, abs=0.06)
    assert a.copy_share_ci[0] <= share <= a.copy_share_ci[1]
    named = set(a.over_copied_rows["row_id"])
    assert set(sources) <= named and len(named - set(sources)) <= 1
    assert (a.rows.set_index("row_id").loc[sources, "identical_copies"] >= 15).all()
    assert (a.rows.set_index("row_id").loc[sources, "closest_level"] == "exact").all()
    assert a.identical_share >= share and str(len(sources)) in a.verdict.sentence
    assert {"identical", "too_close", "rows"} <= set(a.family.holding)


def test_verbatim_copies_of_a_few_rows_are_copying(fresh_split):
    """24 verbatim rows of 600 (3 rows, 8 times each) leave the ratio test's excess inside its noise, but
    no real row equals a training row: the identical share says copying, and the three rows are named."""
    tr, ho, fresh = fresh_split
    syn = fresh.data.reset_index(drop=True).copy()
    syn.iloc[:24] = tr.data.iloc[[5, 9, 77]].loc[np.repeat(tr.data.index[[5, 9, 77]], 8)].to_numpy()
    a = memviz.audit(tr, syn, ho)
    assert a.excess_ci[0] <= 0 and "identical" in a.family.holding
    assert a.verdict.code == "copying" and "review them" in a.verdict.sentence
    assert set(a.over_copied_rows["row_id"]) >= set(tr.data.index[[5, 9, 77]])


def test_near_copies_of_two_rows_alone_are_their_own_verdict(holdout_split):
    """Copies of two rows, 10 of 1,000 each, not identical and no nearer their source than real rows come
    to theirs (between the hold-out's 2nd and 4th percentiles of distance): too few to move the table's
    shares at any level, so only the per-row test holds, and the verdict names the rows without calling the
    table a copy."""
    ref, hold, fresh = holdout_split
    clean = memviz.audit(ref, fresh, hold, quality=False, dcr=False, evidence=False)
    src = ref.data.index[[5, 9]]
    syn = near_copies(ref, fresh.data, src, np.quantile(clean.close.holdout_distances, np.linspace(0.02, 0.04, 20)))
    a = memviz.audit(ref, syn, hold, quality=False, dcr=False, evidence=False)
    assert a.family.holding == ("rows",) and a.verdict.code == "rows_over_copied"
    assert "review them" in a.verdict.sentence and "no copying of the table as a whole" in a.verdict.sentence.lower()
    assert set(a.over_copied_rows["row_id"]) == set(src)
    assert (a.over_copied_rows["identical_copies"] == 0).all()


def test_near_copies_nearer_than_every_real_row_are_copying(holdout_split):
    """The same 20 copies a few units of fnlwgt from their source: 2 % of the rows, below α's 5 % quota, but
    nearer a training row than every real row the model never saw: the table copies, said at that level."""
    ref, hold, fresh = holdout_split
    src = ref.data.index[[5, 9]]
    syn = near_copies(ref, fresh.data, src, np.zeros(20))
    a = memviz.audit(ref, syn, hold, quality=False, dcr=False, evidence=False)
    assert "too_close" in a.family.holding and a.verdict.code == "copying"
    assert a.close.levels[0].p > 0.05 and a.close.carrying_level.k == 1       # α's level alone would not see it
    assert "nearer a training row than any real row it never saw" in a.verdict.sentence
    assert set(a.over_copied_rows["row_id"]) == set(src)
    assert (a.over_copied_rows["closest_level"] == "near-exact").all()


def test_no_holdout_refuses(fresh_split):
    tr, _, fresh = fresh_split
    a = memviz.audit(tr, fresh, quality=False, dcr=False)
    assert a.verdict.code == "no_holdout" and a.floor is None and a.copy_share is None
    assert "hold-out" in a.verdict.sentence
    validate(json.loads(a.to_json()))


def test_a_tiny_holdout_has_no_too_close_test_but_still_judges(fresh_split):
    tr, ho, fresh = fresh_split
    a = memviz.audit(tr, fresh, ho.data.iloc[:15], quality=False)
    assert a.close.k == 0 and a.family.get("too_close") is None and a.family.get("identical") is not None
    assert a.verdict.code == "no_copying"


def test_where_the_ratio_test_is_blind_the_verdict_reads_closeness():
    """An all-numerical table flags every real row; the audit no longer refuses at random on the floor's
    point estimate: it judges from how close the rows are, and says so."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.normal(size=(1600, 3)), columns=["x0", "x1", "x2"])
    schema = Schema(numerical=("x0", "x1", "x2"), categorical=())
    a = memviz.audit(df.iloc[:1000], df.iloc[1000:1300], df.iloc[1300:], schema=schema, quality=False)
    assert a.floor > 0.8 and "ratio_blind" in a.verdict.qualifiers and a.verdict.code == "no_copying"
    assert "cannot see copying" in a.verdict.sentence
    copies = df.iloc[1000:1300].copy()
    copies.iloc[:30] = df.iloc[:30].to_numpy()                              # 10 % verbatim
    b = memviz.audit(df.iloc[:1000], copies, df.iloc[1300:], schema=schema, quality=False)
    assert b.verdict.code == "copying" and "ratio_blind" in b.verdict.qualifiers
    d = json.loads(a.to_json())
    validate(d)
    assert d["ratio_test"]["copy_share"] is None and d["ratio_test"]["copy_share_ci"] is None          # 1 − floor = 0: undefined, not NaN
    page = a.to_html()
    assert "nan" not in page.split("copy share")[1][:300].lower()


def test_noise_fails_the_quality_gate_and_no_quality_is_said(fresh_split):
    tr, ho, fresh = fresh_split
    rng = np.random.default_rng(0)
    noise = fresh.data.reset_index(drop=True).copy()
    for c in tr.schema.distance_numerical:
        noise[c] = rng.uniform(tr.data[c].min(), tr.data[c].max(), len(noise))
    for c in tr.schema.distance_categorical:
        noise[c] = rng.choice(tr.data[c].dropna().unique(), len(noise))
    a = memviz.audit(tr, noise, ho, dcr=False)
    assert a.shape < a.shape_reference - 0.25 and a.verdict.code == "quality_too_low" and a.verdict.tone == "bad"
    b = memviz.audit(tr, fresh, ho, quality=False, dcr=False)
    assert b.shape is None and "quality_unknown" in b.verdict.qualifiers
    assert "quality not measured" in b.verdict.sentence


def test_shape_score_is_sdmetrics_column_shapes(fresh_split):
    from memviz.evaluate.synthetic import quality
    from memviz.evaluate.synthetic import shape as shape_score

    tr, ho, _ = fresh_split
    assert shape_score(tr, ho.data) == pytest.approx(quality(tr, ho.data).shape, abs=1e-12)


def test_inputs_as_paths_frames_and_tables_agree(fresh_split, fresh_audit, tmp_path):
    tr, ho, fresh = fresh_split
    for name, t in (("tr", tr), ("ho", ho), ("syn", fresh)):
        t.data.to_csv(tmp_path / f"{name}.csv", index=False)
    tr.schema.save(tmp_path / "meta.json")
    a = memviz.audit(tmp_path / "tr.csv", tmp_path / "syn.csv", tmp_path / "ho.csv", schema=tmp_path / "meta.json",
                     quality=False, dcr=False)
    assert (a.mem_ratio, a.floor, a.excess, a.n_over_copied) == (fresh_audit.mem_ratio, fresh_audit.floor,
                                                                   fresh_audit.excess, fresh_audit.n_over_copied)
    with pytest.raises(MemvizError, match="not both"):
        memviz.audit(tr.data, fresh.data, schema=tr.schema, metadata=tr.schema.to_sdv())
    with pytest.raises(MemvizError, match="'age'"):
        memviz.audit(tr, fresh.data.drop(columns=["age"]), ho)


def test_to_dict_validates_and_carries_the_issue_keys(fresh_audit):
    d = json.loads(fresh_audit.to_json())
    validate(d)
    # the verdict and the findings it rests on first, the ratio test's averages under their own name
    assert list(d)[:5] == ["format", "verdict", "findings", "n_over_copied", "ratio_test"]
    for key in ("mem_ratio", "floor", "floor_ci", "excess", "excess_ci", "copy_share", "copy_share_ci"):
        assert key in d["ratio_test"] and key not in d
    for key in ("identical_share", "holdout_identical_share", "provenance"):
        assert key in d
    assert d["verdict"]["sentence"] == fresh_audit.verdict.sentence
    assert [f["member"] for f in d["findings"]] and {f["member"] for f in d["findings"]} == {
        m.name for m in fresh_audit.family.members}
    bad = dict(d, verdict={**d["verdict"], "code": "fine"})
    with pytest.raises(MemvizError, match="verdict/code"):
        validate(bad)
    with pytest.raises(MemvizError, match="mem_ratio"):
        validate(dict(d, ratio_test={**d["ratio_test"], "mem_ratio": 1.5}))


def _tags(page: str) -> list[tuple[str, dict]]:
    from html.parser import HTMLParser

    out = []

    class P(HTMLParser):
        def handle_starttag(self, tag, attrs):
            out.append((tag, dict(attrs)))

    P().feed(page)
    return out


def test_the_html_report_is_self_contained_redacted_and_escapes(fresh_split, planted, tmp_path):
    tr, ho, _ = fresh_split
    syn, sources, _ = planted
    a = memviz.audit(tr, syn, ho, quality=False, dcr=False)
    page = a.to_html(tmp_path / "r.html", train=tr, synthetic=syn)
    assert (tmp_path / "r.html").read_text() == page
    assert "Content-Security-Policy" in page
    for tag, attrs in _tags(page):                                           # nothing fetched from outside
        assert tag not in ("link", "iframe", "img") and not (tag == "script" and "src" in attrs)
        assert not any(str(attrs.get(k) or "").lower().startswith(("http", "//")) for k in ("src", "href"))
    assert a.verdict.sentence.replace("'", "&#x27;") in page and "copying" in page
    assert f"Training row {int(a.over_copied_rows['row_id'].iloc[0])}" in page
    raw_value = str(tr.data.loc[int(a.over_copied_rows["row_id"].iloc[0]), "education"])
    assert f">{raw_value}<" not in page                                       # redacted by default
    assert f">{raw_value}<" in a.to_html(redacted=False, train=tr, synthetic=syn)


def test_evidence_is_rendered_and_consulted_only_as_support(fresh_split, fresh_audit):
    class Probe:
        flags_copying = True
        p_value = 1e-6                   # holds inside the family (Holm over its members and this one)

        def to_dict(self):
            return {"auc": 0.71}

        def sentence(self):
            return "A membership probe <b>tells</b> members apart (AUC 0.71)."

    tr, ho, fresh = fresh_split
    a = memviz.audit(tr, fresh, ho, evidence={"membership": Probe()}, quality=False, dcr=False)
    assert a.verdict.code == fresh_audit.verdict.code == "no_copying"
    assert "evidence_disagrees" in a.verdict.qualifiers
    d = a.to_dict()
    assert d["evidence"]["membership"] == {"auc": 0.71, "sentence": Probe().sentence()}
    page = a.to_html()
    assert "&lt;b&gt;tells&lt;/b&gt;" in page and "<b>tells</b>" not in page


def test_copy_share_interval_is_mover_r_and_covers(fresh_audit):
    from memviz.verdict.share import copy_share

    c, lo, hi = copy_share(300, 1000, 200, 800)
    assert c == pytest.approx(1 - (700 / 1000) / (600 / 800))
    assert lo < c < hi
    # its coverage at a sample audit's sizes, by simulation (MOVER-R is approximate, not exact)
    rng = np.random.default_rng(0)
    p0, true_c, m, h = 0.25, 0.10, 600, 400
    p1 = true_c + (1 - true_c) * p0
    hits = 0
    for _ in range(2000):
        _, lo, hi = copy_share(rng.binomial(m, p1), m, rng.binomial(h, p0), h)
        hits += lo <= true_c <= hi
    assert 0.93 <= hits / 2000 <= 0.975
    # where the floor is 0 the copy share is the excess, and the intervals nearly agree with Newcombe's
    d, nlo, nhi = newcombe_interval(120, 1000, 0, 800)
    c, lo, hi = copy_share(120, 1000, 0, 800)
    assert c == pytest.approx(float(d)) and lo == pytest.approx(float(nlo), abs=0.01)


def test_the_row_test_states_what_it_can_see(fresh_audit):
    rt = fresh_audit.row_test
    assert rt.status == "exact" and rt.n_reference == 800 and rt.n_holdout == 400 and rt.n_generated == 600
    assert rt.share == pytest.approx(600 / 1800) and f"at least {rt.copies_needed} close copies" in rt.sentence()
    d = fresh_audit.to_dict()["row_test"]
    assert d["copies_needed"] == rt.copies_needed and d["status"] == "exact"


def test_expected_close_copies_add_up_to_the_reference_rate(fresh_audit):
    a = fresh_audit
    c = a.close
    r = a.rows["real_close"].sum()
    assert a.rows["expected_close"].sum() == pytest.approx(c.n_generated * r / (c.n_holdout + c.n_reference))
    assert a.rows["close_copies"].sum() == int(a.generated["close"].sum())


def test_column_order_and_row_order_of_the_inputs_do_not_change_the_figures(fresh_split, fresh_audit):
    tr, ho, fresh = fresh_split
    rng = np.random.default_rng(2)
    cols = list(rng.permutation(tr.data.columns))
    syn = fresh.data[cols].iloc[rng.permutation(len(fresh))]              # shuffled columns and rows
    a = memviz.audit(tr.data[cols].reset_index(drop=True), syn, ho.data[cols], schema=tr.schema,
                     quality=False, dcr=False)
    for key in ("mem_ratio", "floor", "excess", "copy_share", "identical_share", "holdout_identical_share"):
        assert getattr(a, key) == pytest.approx(getattr(fresh_audit, key)), key
    assert a.rows["copies"].tolist() == fresh_audit.rows["copies"].tolist()


def test_a_wide_table_with_planted_copies(tmp_path):
    rng = np.random.default_rng(7)
    n, n_num, n_cat = 1500, 12, 18
    df = pd.DataFrame({f"n{i}": rng.gamma(2.0, 3.0, n).round(2) for i in range(n_num)})
    for i in range(n_cat):
        df[f"c{i}"] = rng.choice(list("abcde"), n, p=[0.4, 0.3, 0.15, 0.1, 0.05])
    schema = Schema(numerical=tuple(f"n{i}" for i in range(n_num)), categorical=tuple(f"c{i}" for i in range(n_cat)))
    tr, ho, fresh = df.iloc[:800], df.iloc[800:1100], df.iloc[1100:].reset_index(drop=True)
    syn = fresh.copy()
    syn.iloc[:100] = tr.iloc[np.repeat(np.arange(5), 20)].to_numpy()       # 25 % copies of 5 rows
    a = memviz.audit(tr, syn, ho, schema=schema, quality=False, dcr=False)
    b = memviz.audit(tr, fresh, ho, schema=schema, quality=False, dcr=False)
    assert b.verdict.code == "no_copying" and a.verdict.code == "copying"
    assert a.excess - b.excess == pytest.approx(0.25 * (1 - b.floor), abs=0.05)
    assert set(range(5)) <= set(a.over_copied_rows["row_id"])


def test_an_audit_report_never_speaks_of_comparisons(fresh_split, fresh_audit):
    """An audit has no comparison: its report has no "Results" heading saying "No comparison results",
    with or without the tests beyond the ratio test (the line appeared only without them)."""
    tr, ho, fresh = fresh_split
    bare = memviz.audit(tr, fresh, ho, evidence=False, quality=False, dcr=False)
    for page in (bare.to_html(), fresh_audit.to_html()):
        assert "No comparison results" not in page and "<h2>Results" not in page


@pytest.mark.parametrize("which", ["holdout", "synthetic"])
def test_a_table_of_another_schema_is_refused_in_one_line_naming_the_column(fresh_split, which):
    """A hold-out (or synthetic table) given as a Table whose schema lacks a training column raised
    KeyError "['age'] not in index" from the closeness search (a DataFrame got the one-line refusal)."""
    import memviz
    from memviz.tables.data import table_from_frame

    tr, ho, fresh = fresh_split
    first = tr.schema.columns[0]
    src = ho if which == "holdout" else fresh
    other = table_from_frame(src.data.drop(columns=[first]), source=f"{which}.csv")
    args = (tr, other, ho) if which == "synthetic" else (tr, fresh.data, other)
    with pytest.raises(MemvizError, match=rf"^{which}\.csv: column '{first}': in the training table but not in this one$"):
        memviz.audit(*args)


def test_a_table_with_the_training_columns_in_another_schema_is_read_in_the_training_schema(fresh_split,
                                                                                          fresh_audit):
    """A hold-out Table inferred on its own (its columns in another order, types inferred afresh) gives the
    audit of the same rows as a DataFrame."""
    import memviz
    from memviz.tables.data import table_from_frame

    tr, ho, fresh = fresh_split
    own = table_from_frame(ho.data[list(reversed(tr.schema.columns))], source="holdout")
    got = memviz.audit(tr, fresh.data, own)
    assert got.floor == fresh_audit.floor and got.excess == fresh_audit.excess
