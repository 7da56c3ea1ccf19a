"""Data: the bundled sample, a shared benchmark table or an upload; schema editor; test split."""
import streamlit as st

from memviz.app import datasets
from memviz.errors import MemvizError
from memviz.schema import KINDS
from pages import _ui

_ui.through_app()

st.title("Data")
st.write("Pick the training table whose memorization you want to measure. The bundled sample works out of "
         "the box; benchmark tables appear when `../shared/datasets` is present; uploads are parsed as data only.")

choices = datasets.dataset_choices()
UPLOAD = "upload"
labels = {c.key: c.label for c in choices} | {UPLOAD: "Upload a CSV or Parquet file"}
source = st.radio("Source", list(labels), format_func=labels.get, key="data_source")

raw = None
if source == UPLOAD:
    col1, col2 = st.columns(2)
    up = col1.file_uploader("Training table (CSV or Parquet)", type=["csv", "parquet", "pq", "txt"], key="upload_train")
    up_test = col2.file_uploader("Test table (optional, same columns)", type=["csv", "parquet", "pq", "txt"],
                                 key="upload_test")
    if up is None:
        st.info("Upload a table with a header row; one row per record. Nothing is executed or unpickled.")
    else:
        try:
            raw = _ui.raw_upload(up.name, up.getvalue(), up_test.name if up_test else None,
                                 up_test.getvalue() if up_test else None)
        except MemvizError as exc:
            _ui.error(exc)
else:
    try:
        raw = _ui.raw_choice(source)
    except MemvizError as exc:
        _ui.error(exc)

if raw is not None:
    for note in raw.notes:
        st.warning(note)
    st.subheader("Schema")
    st.caption("Change a column's type in the **kind** column: numerical, categorical, target (the label) or "
               "excluded (left out, e.g. identifiers).")
    edited = st.data_editor(
        datasets.schema_editor_frame(raw.schema, raw.frame), key=f"schema_{source}_{raw.source}", hide_index=True,
        disabled=["column", "dtype", "distinct", "missing %", "example"], num_rows="fixed",
        column_config={"kind": st.column_config.SelectboxColumn("kind", options=list(KINDS), required=True)})
    splits = (["file"] if raw.test is not None else []) + ["random", "none"]
    split_labels = {"file": "the provided test file", "random": "a random hold-out of this table",
                    "none": "no test split (MLE and DCR need one)"}
    c1, c2, c3 = st.columns([2, 1, 1])
    split = c1.radio("Test split", splits, format_func=split_labels.get, key="data_split", horizontal=True)
    share = c2.slider("Hold-out share", 0.05, 0.5, 0.25, 0.05, disabled=split != "random", key="data_share")
    seed = c3.number_input("Split seed", 0, 2**31 - 1, 0, key="data_seed", disabled=split != "random")
    try:
        schema = datasets.apply_schema_edits(raw.schema, edited, raw.frame)
        train, test = datasets.build_tables(raw, schema, split, share, int(seed))
    except MemvizError as exc:
        _ui.error(exc)
    else:
        summary = datasets.data_summary(train, test)
        cols = st.columns(5)
        for col, key in zip(cols, ("rows", "test rows", "numerical", "categorical", "target")):
            col.metric(key, f"{summary[key]:,}" if isinstance(summary[key], int) else summary[key])
        if "classes" in summary:
            st.caption(f"Task: {summary['task']} · classes: {summary['classes']}")
        current = st.session_state.get(_ui.DATA, {})
        same = (current.get("label") == raw.label and current.get("train") is not None
                and current["train"].schema == schema and len(current["train"]) == len(train)
                and ((current.get("test") is None) == (test is None)))
        if st.button("Use this table", type="primary", disabled=same, key="use_table"):
            _ui.set_data(train, test, raw.label)
            st.rerun()
        if same:
            st.success(f"Current table: {raw.label} ({len(train):,} rows). Next: **Warm-up**.")
        st.subheader("Preview")
        st.dataframe(train.data.head(200), height=300)
