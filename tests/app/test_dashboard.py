"""memviz.app: the pages' library side (uploads, schema edits, splits, runs, pruning, report)."""
from __future__ import annotations

import io
import json
import math
import re
import shutil
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from dash_helpers import copier_run, finished_compare

from memviz.app import comparisons, datasets, reports, runs
from memviz.compare.details import compute_details
from memviz.dynamics.dynamiccut import dynamiccut_selection, early_identification_curve
from memviz.errors import BadTable, MemvizError
from memviz.jobs import control as jobs


# ----------------------------------------------------------------- data in
def test_dataset_choices_start_with_the_sample_and_list_shared_folders(tmp_path, monkeypatch, sample):
    train, _ = sample
    (tmp_path / "mine").mkdir()
    train.data.head(20).to_csv(tmp_path / "mine" / "train.csv", index=False)
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv(datasets.DATASETS_ENV, str(tmp_path))
    choices = datasets.dataset_choices()
    assert choices[0].key == "sample" and choices[0].has_test
    assert [c.key for c in choices[1:]] == ["shared:mine"]
    raw = datasets.load_choice("shared:mine")  # no meta.json: inferred schema
    assert raw.test is None and len(raw.frame) == 20 and raw.schema.name == "train"
    with pytest.raises(BadTable, match="not available"):
        datasets.choice_by_key("shared:nothing")


def test_read_upload_parses_csv_and_parquet_and_rejects_the_rest(sample):
    train, _ = sample
    df = train.data.head(30).reset_index(drop=True)
    assert datasets.read_upload("t.csv", df.to_csv(index=False).encode()).shape == df.shape
    buf = io.BytesIO()
    df.to_parquet(buf, index=False)
    back = datasets.read_upload("t.parquet", buf.getvalue())
    pd.testing.assert_frame_equal(back, df)
    for name, raw, msg in [("t.csv", b"", "empty"), ("t.csv", b"\x00\x01\x02binary\x00data", "binary"),
                           ("t.parquet", b"PAR1garbage", "Parquet"), ("t.parquet", b"a,b\n1,2\n", "Parquet"),
                           ("t.csv", b"1,2,3\n4,5,6\n", "no header")]:
        with pytest.raises(BadTable, match=msg) as err:
            datasets.read_upload(name, raw)
        assert "\n" not in str(err.value)


def test_upload_guesses_a_label_column():
    df = pd.DataFrame({"x": np.arange(50) * 1.5, "colour": ["r", "g"] * 25, "y": [0, 1, 1, 0, 1] * 10})
    raw = datasets.raw_from_upload("d.csv", df.to_csv(index=False).encode())
    assert raw.schema.target == "y" and raw.schema.task == "binary"
    assert raw.suggestion.column == "y" and "last column" in raw.suggestion.reason   # said, with its reason
    assert datasets.suggest_target(pd.DataFrame({"a": np.arange(30.0)})).column is None


def test_schema_edits_move_columns_and_name_the_bad_one(sample):
    raw = datasets.load_choice("sample")
    frame = datasets.schema_editor_frame(raw.schema, raw.frame)
    assert list(frame["column"]) == list(raw.frame.columns)
    edited = frame.copy()
    edited.loc[edited["column"] == "age", "kind"] = "excluded"
    edited.loc[edited["column"] == "education-num", "kind"] = "categorical"
    schema = datasets.apply_schema_edits(raw.schema, edited, raw.frame)
    assert "age" in schema.excluded and "education-num" in schema.categorical
    assert schema.target == "income" and schema.task == "binary"
    two = frame.copy()
    two.loc[two["column"] == "sex", "kind"] = "target"
    with pytest.raises(BadTable, match="only one column can be the target") as err:
        datasets.apply_schema_edits(raw.schema, two, raw.frame)
    assert "'sex'" in str(err.value) and "'income'" in str(err.value)
    moved = frame.copy()
    moved.loc[moved["column"] == "income", "kind"] = "categorical"
    moved.loc[moved["column"] == "hours-per-week", "kind"] = "target"
    assert datasets.apply_schema_edits(raw.schema, moved, raw.frame).task == "regression"
    none = frame.assign(kind="excluded")
    with pytest.raises(BadTable, match="no feature column"):
        datasets.apply_schema_edits(raw.schema, none, raw.frame)


def test_random_split_is_seeded_disjoint_and_renumbers_training_rows():
    raw = datasets.load_choice("sample")
    train, test = datasets.build_tables(raw, raw.schema, "random", 0.2, seed=3)
    assert len(test) == 600 and len(train) == 2400
    assert (train.row_ids == np.arange(2400)).all()
    again, test2 = datasets.build_tables(raw, raw.schema, "random", 0.2, seed=3)
    pd.testing.assert_frame_equal(train.data, again.data)
    other, _ = datasets.build_tables(raw, raw.schema, "random", 0.2, seed=4)
    assert not train.data.equals(other.data)
    # every original row is in exactly one split
    both = pd.concat([train.data, test.data]).sort_values(list(raw.schema.columns)).reset_index(drop=True)
    orig = raw.frame[list(raw.schema.columns)].sort_values(list(raw.schema.columns)).reset_index(drop=True)
    pd.testing.assert_frame_equal(both, orig, check_dtype=False)
    t2, te = datasets.build_tables(raw, raw.schema, "file")
    assert len(t2) == 3000 and len(te) == 1000
    assert datasets.build_tables(raw, raw.schema, "none")[1] is None
    with pytest.raises(BadTable, match="test share"):
        datasets.build_tables(raw, raw.schema, "random", 0.95)


# ---------------------------------------------------------------------- runs
def test_runs_table_lists_runs_newest_first(view, tmp_path):
    df = runs.runs_table(view.path.parent)
    assert df["run_id"].tolist() == ["copier"] and df["status"].iloc[0] == "finished"
    assert "copier" in df["label"].iloc[0]
    assert runs.runs_table(tmp_path).empty
    t0 = runs.run_token(view.path)
    assert t0 > 0 and runs.run_token(tmp_path / "nothing") == 0


def test_prune_preview_removes_the_top_p_rows_with_their_values(view, small):
    for p in (0.05, 0.2):
        prev = runs.prune_preview(view, p, 2, None)
        assert prev.n_remove == math.ceil(p * len(small)) == len(prev.removed)
        assert list(prev.removed["rank"]) == list(range(1, prev.n_remove + 1))
        assert prev.removed["score"].is_monotonic_decreasing
        ids = prev.removed["row_id"].to_numpy()
        pd.testing.assert_frame_equal(prev.removed[list(small.schema.columns)].reset_index(drop=True),
                                      small.data.loc[ids].reset_index(drop=True))
        csv = pd.read_csv(io.BytesIO(runs.pruned_csv(view, ids, keep_row_id=True)))
        assert "row_id" not in pd.read_csv(io.BytesIO(runs.pruned_csv(view, ids))).columns   # not by default
        assert len(csv) == len(small) - prev.n_remove and not set(ids) & set(csv["row_id"])
    with pytest.raises(MemvizError, match="p must be"):
        runs.prune_preview(view, 1.5, 2, None)


def test_a_kept_ranking_gives_the_library_selection_and_curve_at_every_p(view):
    """Tune & prune keeps one ranking per (k, T): a p move is a slice of it. It must give what
    dynamiccut_selection / early_identification_curve give when they rescore from scratch."""
    dyn = view.dynamics
    for k in (1, 2, 3):
        ranked = runs.rankings(view, k)
        assert sorted(ranked) == sorted(set(view.epochs))
        for p in (0.01, 0.07, 0.3, 0.5):
            for T, r in ranked.items():
                want, got = dynamiccut_selection(dyn, p=p, k=k, T=T), r.selection(p)
                for f in ("removed", "row_ids", "scores", "ranks"):
                    np.testing.assert_array_equal(getattr(got, f), getattr(want, f))
                assert (got.p, got.k, got.T, got.n_remove, got.n_checks_used) == \
                       (want.p, want.k, want.T, want.n_remove, want.n_checks_used)
            pd.testing.assert_frame_equal(runs.early_curve(view, p, k, ranked=ranked),
                                          early_identification_curve(dyn, p=p, k=k))
            T = view.epochs[-1]
            a, b = runs.prune_preview(view, p, k, T), runs.prune_preview(view, p, k, T, ranked=ranked[T])
            pd.testing.assert_frame_equal(a.removed, b.removed)


def test_a_redacted_preview_reads_the_redacted_table(view):
    prev = runs.prune_preview(view, 0.2, 2, None)
    fast = runs.prune_preview(view, 0.2, 2, None, values=runs.redacted_table(view))
    pd.testing.assert_frame_equal(fast.removed, runs.redacted_rows(view, prev.removed))


def test_the_leak_explorer_table_has_readable_headers(view):
    """Issue 20 item 2: the copies table showed raw keys (synthetic_id, r ≈ 0 from scaling)."""
    row = int(runs.most_copied_table(view, n=1)["row_id"].iloc[0])
    lv = runs.leak_view(view, row)
    for redacted in (False, True):
        cols = list(runs.styled_copies(lv, redacted).data.columns)
        assert "synthetic_id" not in cols and "r ≈ 0 from scaling" not in cols and "ratio" not in cols
        assert "generated row no." in cols and cols[-len(view.train.schema.columns):] == list(view.train.schema.columns)


def test_most_copied_and_column_leaks(view):
    top = runs.most_copied_table(view, n=5)
    assert top["total_count"].is_monotonic_decreasing and "workclass" in top.columns
    check = int(view.result.checks["check"].max())
    leak = runs.column_leaks(view, check)
    assert leak.n_memorized + leak.n_non_memorized == int((view.result.checks["check"] == check).sum())
    rates = leak.columns.set_index("column")
    # exact copies match their NN1 in every column, so memorized rows match at least as often
    assert (rates["memorized_rate"] >= rates["non_memorized_rate"] - 1e-12).all()


def test_report_html_is_self_contained_and_redacted_by_default(view):
    html = reports.report_html(view, None, p=0.1, k=2)
    assert html.startswith("<!DOCTYPE html>") and html.count("<figure") == len(reports.figures(view))
    assert "Redacted report" in html and "http://" not in html.split("<script")[0]
    raw = reports.report_html(view, None, redacted=False)
    assert "Not redacted" in raw
    with pytest.raises(MemvizError, match="nothing to report"):
        reports.report_html(None, None)


def test_compare_details_shapes_and_distances(small, sample, tmp_path):
    _, test = sample
    out = finished_compare(tmp_path, small, np.random.default_rng(1))
    # replace one synthetic table by exact training copies: its distances to the training split are 0
    copies = small.data.reset_index(drop=True)
    copies.to_parquet(out / "synthetic" / "baseline_tabddpm_0.parquet", index=False)
    (out / "details" / "dcr.parquet").unlink()
    res = compute_details(out, small, test.subset(test.row_ids[:120]), device="cpu")
    assert res["cells"] == 6 and comparisons.details_done(out)
    cv = comparisons.load_compare(out)
    assert set(cv.column_shapes["column"]) == set(small.schema.columns)
    assert cv.column_shapes["score"].between(0, 1).all()
    d = cv.dcr_for("tabddpm", seed=0)
    assert set(d) == {"baseline", "dynamiccut", "random"}
    assert (d["baseline"] == 0).all() and (d["dynamiccut"] >= 0).all()
    assert comparisons.compare_token(out) > 0
    assert set(comparisons.synthetic_files(out)) == {f"synthetic/{m}_tabddpm_{s}.parquet"
                                              for m in ("baseline", "dynamiccut", "random") for s in (0, 1)}


# ------------------------------------------------------------ downloads for spreadsheets
PAYLOADS = ['=HYPERLINK("http://127.0.0.1:8599/x","click")', "@SUM(1+1)", "+cmd|' /C calc'!A0"]


def test_pruned_and_synthetic_downloads_neutralise_formulas(small, tmp_path):
    """On today's main (dd9d899) the pruned-table and synthetic-table downloads carried these
    category values unchanged (generated rows copy category values, so the payload carries)."""
    data = small.data.copy()
    data["workclass"] = [PAYLOADS[i % 3] for i in range(len(data))]
    data["capital-loss"] = -data["capital-loss"]
    evil = small.with_data(data)
    copier_run(evil, tmp_path / "evil")
    view = runs.load_run(tmp_path / "evil")
    for raw in (False, True):
        got = pd.read_csv(io.BytesIO(runs.pruned_csv(view, [0, 1], keep_row_id=True, raw=raw)))
        want = data.drop(index=[0, 1])
        assert got["row_id"].tolist() == want.index.tolist()
        assert got["workclass"].tolist() == [v if raw else "'" + v for v in want["workclass"]]
        assert got["capital-loss"].tolist() == want["capital-loss"].tolist()
    syn = tmp_path / "syn.parquet"
    data.reset_index(drop=True).to_parquet(syn)
    got = pd.read_csv(io.BytesIO(reports.table_csv(syn)))
    assert got["workclass"].tolist() == ["'" + v for v in data["workclass"]]
    assert got["capital-loss"].tolist() == data["capital-loss"].tolist()
    assert pd.read_csv(io.BytesIO(reports.table_csv(syn, raw=True)))["workclass"].tolist() == data["workclass"].tolist()


def test_runs_table_lists_an_unreadable_run_last_with_its_reason(view, tmp_path):
    shutil.copytree(view.path, tmp_path / "b_good")
    shutil.copytree(view.path, tmp_path / "a_bad")
    m = json.loads((tmp_path / "a_bad" / "manifest.json").read_text())
    del m["data"]
    (tmp_path / "a_bad" / "manifest.json").write_text(json.dumps(m))
    df = runs.runs_table(tmp_path)
    assert df["run_id"].tolist() == ["b_good", "a_bad"]
    assert df["label"].tolist()[1] == "a_bad · unreadable"
    assert df["status"].tolist() == ["finished", "unreadable: manifest.json: manifest lacks the field 'data'"]


# ----------------------------------------------------------------- issue 13: no traps, words, one readout
def test_with_target_moves_the_target_in_one_step():
    raw = datasets.load_choice("sample")
    s = datasets.with_target(raw.schema, raw.frame, "sex")
    assert s.target == "sex" and s.task == "binary"
    assert "sex" not in s.categorical and "income" in s.categorical        # the old target becomes a feature
    assert datasets.with_target(raw.schema, raw.frame, "age").task == "regression"
    none = datasets.with_target(raw.schema, raw.frame, None)
    assert none.target is None and "income" in none.categorical
    assert datasets.with_target(raw.schema, raw.frame, raw.schema.target) == raw.schema
    with pytest.raises(BadTable, match="'nope'"):
        datasets.with_target(raw.schema, raw.frame, "nope")


def test_the_readout_is_one_line_in_words(tmp_path):
    one = jobs.JobStatus("j", "warmup", "running", 5, 60, "epoch", "", checks=[{"check": 0}], updated=0.0)
    assert one.readout() == "running · epoch 5/60 · 1 check"                     # not "1 checks"
    assert "updated at" in one.banner() and one.readout() in one.banner()
    cancelled = jobs.JobStatus("j", "warmup", "cancelled", 5, 60, checks=[{}, {}],
                               message="cancelled; the finished checks are kept")
    assert cancelled.readout() == "cancelled · 2 checks" and "{" not in cancelled.readout()
    cells = jobs.JobStatus("c", "compare", "running", 2, 9, "cell", "cells")
    assert cells.readout() == "running · cell 2/9" and cells.banner().startswith("Comparison in progress")


def test_report_names_differ_and_the_report_leads_with_the_verdict(view):
    assert reports.report_name(view, None, True) != reports.report_name(view, None, False)
    assert reports.report_name(view, None, True).endswith("_redacted.html")
    html = reports.report_html(view, None)
    for internal in ("heavy_tail", "p_first_epoch", "gini", "early_checks", "top_frac"):
        assert internal not in html.split("<script")[0], internal
    start = html.index("<body>")
    verdict_at = html.index("What this run shows", start)
    assert verdict_at < html.index("<h2>Figures") and verdict_at < html.index("<h2>Settings")
    assert "not measured" in html                                               # no floor: said in words
    assert "What the words mean" in html and "relative closeness, not identity" in html


def test_report_keys_its_hashes_per_report(view):
    a, b = reports.report_html(view, None), reports.report_html(view, None)
    cats = lambda doc: set(re.findall(r"cat-[0-9a-f]{6}", doc))                  # noqa: E731
    assert cats(a) and not cats(a) & cats(b)


def test_a_comparison_borrows_the_floor_of_its_own_warmup_only(tmp_path):
    job = jobs.Job(jobs.new_job_id("compare"), "compare", tmp_path)
    job.job_dir.mkdir(parents=True)
    run = tmp_path / "run-a"
    jobs.write_spec(job.spec_path, jobs.JobSpec("compare", {"run_dir": str(run), "distance": "paper"},
                                                {"out": str(job.out)}))
    cv = comparisons.CompareView(job.out, pd.DataFrame())
    floor = SimpleNamespace(distance="paper")
    view = SimpleNamespace(path=run, result=SimpleNamespace(floor=floor))
    assert comparisons.run_floor(cv, view) is floor
    other = SimpleNamespace(path=tmp_path / "run-b", result=SimpleNamespace(floor=floor))
    assert comparisons.run_floor(cv, other) is None                         # ranked with another run
    std = SimpleNamespace(path=run, result=SimpleNamespace(floor=SimpleNamespace(distance="standardized")))
    assert comparisons.run_floor(cv, std) is None                           # another distance
    assert comparisons.run_floor(cv, SimpleNamespace(path=run, result=SimpleNamespace(floor=None))) is None


def test_pruned_download_is_ready_for_the_next_tool(view, small):
    """Issue 20 item 6: the user's column order and names, no row_id unless asked, a readable name."""
    ids = runs.prune_preview(view, 0.1, 2, None).removed["row_id"].to_numpy()
    plain = pd.read_csv(io.BytesIO(runs.pruned_csv(view, ids)))
    assert list(plain.columns) == list(small.order)                     # the run's own file keeps the user's order
    user_order = list(small.schema.columns)[::-1]
    job_dir = runs.job_for(view.path).job_dir
    job_dir.mkdir(parents=True, exist_ok=True)
    runs.save_column_order(view.path, user_order)
    again = pd.read_csv(io.BytesIO(runs.pruned_csv(view, ids)))
    assert list(again.columns) == user_order and "row_id" not in again.columns
    assert len(again) == len(small) - len(ids)
    name = runs.pruned_file_name(view, 0.1, 3, 50)
    assert name.endswith("_pruned_10pct_k3_T50.csv") and " " not in name and "/" not in name


def test_k_is_bounded_by_the_checks_at_or_before_T(view):
    """Issue 20 item 4: k = 11 with 10 checks up to T was accepted silently."""
    epochs = view.epochs                                   # (2, 4, 6)
    assert runs.checks_until(view, epochs[1]) == 2 and runs.checks_until(view, None) == len(epochs)
    assert runs.bounded_k(view, 2, epochs[1]) == (2, "")
    k, reason = runs.bounded_k(view, 11, epochs[1])
    assert k == 2 and reason.startswith(f"k = 11 is more than the 2 checks at or before T = {epochs[1]}")
    assert "\n" not in reason
    assert runs.bounded_k(view, 5, epochs[0])[0] == 1 and "1 check at" in runs.bounded_k(view, 5, epochs[0])[1]


def test_tuning_is_kept_with_the_run(view):
    assert runs.saved_tuning(view) is None or runs.saved_tuning(view)["run"] == view.run_id
    tuned = runs.PruneParams(view.run_id, 0.17, 2, view.epochs[-1])
    runs.save_tuning(view, tuned)
    assert runs.saved_prune_params(runs.saved_tuning(view), view.run_id) == tuned
    # values from a URL are text; a hand-edited one falls back to the defaults
    assert runs.saved_prune_params({"run": view.run_id, "p": "0.17", "k": "2", "T": str(view.epochs[-1])},
                             view.run_id) == tuned
    assert runs.saved_prune_params({"run": view.run_id, "p": "x", "k": "2"}, view.run_id) == runs.PruneParams(view.run_id)


def test_a_run_knows_its_table_and_form_settings(view, small):
    train, holdout, label = runs.run_tables(view.path)
    pd.testing.assert_frame_equal(train.data, small.data)
    assert holdout is None and label
    form = runs.run_form_settings(view.path)
    assert form["epochs"] == 6 and form["check_every"] == 2 and runs.run_form_settings(None) == {}
