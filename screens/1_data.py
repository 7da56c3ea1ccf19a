"""Data: the bundled sample, a shared benchmark table or an upload; target, schema editor, test split."""
import dataclasses
from pathlib import Path

import pandas as pd
import streamlit as st

from memviz.app import bounds, datasets, runs, uploads
from memviz.errors import MemvizError
from memviz.tables.data import fingerprint
from screens import _ui

st.title("Data")
st.write("Pick the training table whose memorization you want to measure. The bundled sample works out of "
         "the box; the benchmark tables (Adult, Default, Shoppers) appear when this machine has them; uploads are "
         "parsed as data only and kept with the runs, so a reload finds them again.")

state = st.session_state
current = _ui.ensure_data()
root = _ui.root()
choices = datasets.dataset_choices()
UPLOAD = "upload"
labels = {c.key: c.label for c in choices} | {UPLOAD: "Upload a CSV or Parquet file"}
if "data_source" not in state:  # after a reload, start from where the current table came from
    came_from = str(current.get("choice") or "sample")
    state["data_source"] = UPLOAD if came_from.startswith("upload:") else (came_from if came_from in labels else "sample")
source = st.radio("Source", list(labels), format_func=labels.get, key="data_source")

raw, choice, test_name = None, source, None
if source == UPLOAD:
    col1, col2 = st.columns(2)
    up = col1.file_uploader("Training table (CSV or Parquet)", type=["csv", "parquet", "pq", "txt"], key="upload_train")
    up_test = col2.file_uploader("Test table (optional, same columns)", type=["csv", "parquet", "pq", "txt"],
                                 key="upload_test")
    if up is not None:
        test_name = up_test.name if up_test else None
        try:
            raw = _ui.raw_upload(up.name, up.getvalue(), test_name, up_test.getvalue() if up_test else None)
            kept = uploads.save_upload(root, up.name, up.getvalue(), test_name,
                                        up_test.getvalue() if up_test else None)
            choice = f"upload:{kept.key}"
        except MemvizError as exc:
            _ui.error(exc)
    else:
        stored = uploads.list_uploads(root)
        if stored:
            keys = [u.key for u in stored]
            came_from = str(current.get("choice") or "")
            if "upload_pick" not in state and came_from.removeprefix("upload:") in keys:
                state["upload_pick"] = came_from.removeprefix("upload:")
            names = {u.key: u.label for u in stored}
            pick = st.selectbox("Or reopen an earlier upload (kept under the runs folder)", [""] + keys,
                                format_func=lambda k: names.get(k, "— choose —") if k else "— choose —",
                                key="upload_pick")
            if pick:
                try:
                    raw = _ui.raw_kept(root, pick)
                    choice, test_name = f"upload:{pick}", names[pick]
                except MemvizError as exc:
                    _ui.error(exc)
        if raw is None:
            st.info("Upload a table with a header row; one row per record. Nothing is executed or unpickled. "
                    + _ui.esc(bounds.uploads_caption(Path(root) / uploads.UPLOADS)))
else:
    try:
        raw = _ui.raw_choice(source)
    except MemvizError as exc:
        _ui.error(exc)

if raw is not None:
    meta_up = st.file_uploader("Schema (optional): SDV metadata JSON or memviz meta.json", type=["json"],
                               key=f"upload_schema_{choice}", help="SDV's single-table metadata (sdtypes) or the "
                               "meta.json format; it replaces the inferred schema. SDV metadata has no target: "
                               "pick it below.")
    if meta_up is not None:
        try:
            sch = datasets.schema_from_upload(meta_up.name, meta_up.getvalue(), raw.frame, raw.schema.target)
            raw = dataclasses.replace(raw, schema=sch, notes=sch.sdv_notes(), suggestion=None, facts=())
        except MemvizError as exc:
            _ui.error(exc)
    for note in raw.notes:          # a column left out or re-typed: a warning
        _ui.warning(note)
    for fact in raw.facts:          # what was found (the row key): information, not a warning
        st.info(_ui.esc(fact), icon=":material/key:")
    # a new table, or a test file added or removed, resets the split to its default: the test file
    # when there is one (it used to stay on "a random hold-out" and drop a quarter of the rows silently)
    signature = (choice, raw.source, raw.test is not None, test_name)
    if state.get("data_signature") != signature:
        state["data_signature"] = signature
        state["data_split"] = "file" if raw.test is not None else "random"

    st.subheader("Target")
    columns = [str(c) for c in raw.frame.columns]
    default_target = raw.schema.target if raw.schema.target in columns else None
    tip = raw.suggestion
    if tip is not None:   # an inferred schema: the target is asked for, never taken from a column's name
        st.caption("Which column is the label a model learns to predict? memviz suggests one from the table's "
                   "shape, not from names: "
                   + (f"**{_ui.esc(tip.column)}**, {_ui.esc(tip.reason)}." if tip.column else
                      f"none ({_ui.esc(tip.reason)}).") + " Pick another, or none.")
    target = st.selectbox("Target column (the label a model learns to predict; MLE scores it)", [""] + columns,
                          index=0 if default_target is None else 1 + columns.index(default_target),
                          format_func=lambda c: c or "— none —", key=f"target_{choice}") or None
    try:
        schema_t = datasets.with_target(raw.schema, raw.frame, target)
    except MemvizError as exc:
        _ui.error(exc)
        st.stop()
    st.markdown(_ui.esc(datasets.target_line(schema_t, raw.frame, tip)))

    st.subheader("Schema")
    st.caption("Change a column's type in the **kind** column: numerical, categorical, key (the column that names "
               "your rows, or several that name a row together: left out of the distance, kept to name rows "
               "everywhere) or excluded (left out). "
               "**why** says why a column is the key or was left out; the target is chosen above.")
    frame = datasets.schema_editor_frame(schema_t, raw.frame)
    is_target = frame["column"] == schema_t.target
    edited = st.data_editor(
        frame[~is_target].reset_index(drop=True), key=f"schema_{choice}_{target}", hide_index=True,
        disabled=["column", "dtype", "distinct", "missing %", "example", "why"], num_rows="fixed",
        column_config={"kind": st.column_config.SelectboxColumn("kind", options=list(datasets.FEATURE_KINDS),
                                                                required=True),
                       "why": st.column_config.TextColumn("why", width="large")})
    splits = (["file"] if raw.test is not None else []) + ["random", "none"]
    split_labels = {"file": "the provided test file", "random": "a random hold-out of this table",
                    "none": "no test split (MLE, DCR and the floor need one)"}
    if state.get("data_split") not in splits:
        state["data_split"] = splits[0]
    c1, c2, c3 = st.columns([2, 1, 1])
    split = c1.radio("Test split", splits, format_func=split_labels.get, key="data_split", horizontal=True,
                     help="Real rows kept away from training: MLE and DCR score against them, and the floor "
                          "(how often real rows the model never saw are flagged) is measured on them.")
    share = c2.slider("Hold-out share", 0.05, 0.5, 0.25, 0.05, disabled=split != "random", key="data_share")
    seed = c3.number_input("Split seed", 0, 2**31 - 1, 0, key="data_seed", disabled=split != "random")
    try:
        schema = datasets.apply_schema_edits(schema_t, pd.concat([edited, frame[is_target]], ignore_index=True),
                                             raw.frame)
        train, test = datasets.build_tables(raw, schema, split, share, int(seed))
    except MemvizError as exc:
        _ui.error(exc)
    else:
        summary = datasets.data_summary(train, test)
        cols = st.columns(4)
        for col, key in zip(cols, ("rows", "test rows", "numerical", "categorical")):
            col.metric(key, f"{summary[key]:,}")
        # names in text that wraps: a metric cut a row key to "rowna…"
        st.markdown(f"**Target:** {_ui.esc(summary['target'])} · **Row key:** {_ui.esc(summary['row key'])}")
        if "classes" in summary:
            st.caption(f"Task: {_ui.esc(summary['task'])} · classes: {_ui.esc(summary['classes'])}")
        train_print = fingerprint(train)
        if current.get("train") is not None and "fingerprint" not in current:
            current["fingerprint"] = fingerprint(current["train"])
        same = (current.get("label") == raw.label and current.get("fingerprint") == train_print
                and current["train"].schema == schema and ((current.get("test") is None) == (test is None))
                and (test is None or len(current["test"]) == len(test)))
        run_dir = _ui.current_run_dir()
        run_print = _ui.run_fingerprint(run_dir, runs.run_token(run_dir)) if run_dir else ""
        other_run = bool(run_dir and not same and run_print and run_print != train_print)
        if other_run:
            st.caption(f"Using this table deselects run {_ui.esc(Path(run_dir).name)}: it was trained on another "
                       "table. The run stays under Saved runs on the Warm-up page; start a new warm-up for this one.")
        if st.button("Use this table", type="primary", disabled=same, key="use_table"):
            _ui.use_table(train, test, raw.label, choice, [str(c) for c in raw.frame.columns])
            if other_run:
                _ui.select_run(None)
                st.toast(f"Run {Path(run_dir).name} was trained on another table and is no longer selected.")
            st.rerun()
        if same:
            st.success(f"Current table: {_ui.esc(raw.label)} ({len(train):,} training rows, "
                       f"{len(test) if test is not None else 0:,} test rows). Next: **Warm-up**.")
        st.subheader("Preview")
        st.dataframe(train.to_frame(order=columns, row_id=False).head(200), height=300, hide_index=True)
