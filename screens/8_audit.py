"""Audit a synthetic table made by any generator: the training table, a hold-out and the synthetic
table in; the floor, the excess, the copy share, the over-copied rows and the verdict out, with the
same report and audit.json as `memviz audit`."""
import dataclasses

import streamlit as st

from memviz.app import audits, datasets, demo, readings, uploads
from memviz.verdict.verdict import BELOW_FLOOR
from memviz.errors import MemvizError
from memviz.tables.data import fingerprint
from screens import _ui

FILES = ["csv", "parquet", "pq", "txt"]


st.title("Audit a synthetic table")
st.write("Upload the training table a generator learned from, a hold-out (real rows it never saw, same columns) and "
         "a synthetic table it made: any generator, CSV or Parquet. The audit measures how often the test flags the "
         "generated rows and the hold-out rows (the floor), what the model adds above that, and which training rows "
         "are copied far more than chance.")

data = _ui.ensure_data()
KEPT, OPTIONS, SHADOW = "audit_kept", ("audit_use_current", "audit_distance", "audit_target"), "audit_options"
PARAM = "audit"     # URL parameter: the files kept with the runs (uploads.save_audit_files), so a reload finds them
# the page's options outlive a visit to another page: Streamlit drops a widget's state when a run does not draw
# it, so each option is kept under a key of no widget too and given back to its widget on return
shadow = st.session_state.setdefault(SHADOW, {})
for k in OPTIONS:
    if k not in st.session_state and k in shadow:
        st.session_state[k] = shadow[k]
if KEPT not in st.session_state and st.query_params.get(PARAM):      # a reload: the files kept with the runs
    try:
        st.session_state[KEPT] = uploads.load_audit_files(_ui.root(), st.query_params[PARAM])
    except MemvizError as exc:
        _ui.warning(f"The files of this address are gone: {exc}. Upload them again.")
        del st.query_params[PARAM]
    else:
        st.session_state.setdefault("audit_use_current", st.session_state[KEPT]["current"])


def use_example() -> None:
    """The example (memviz.app.demo): the bundled sample's training table and test split, and a generator's table
    with planted copies, given as uploads (a callback: it sets the toggle before it is drawn)."""
    files = demo.example_files()
    st.session_state[KEPT] = {"current": False, "example": True,
                              "names": tuple(files[r][0] for r in uploads.AUDIT_ROLES),
                              "raws": tuple(files[r][1] for r in uploads.AUDIT_ROLES)}
    st.session_state["audit_use_current"] = False


if st.session_state.get(KEPT) is None and demo.has_example():
    with st.container(border=True, key="audit_example_box"):
        left, right = st.columns([4, 1], vertical_alignment="center")
        left.markdown("**No tables at hand? Try the example.** The bundled sample's training table and test split, "
                      f"with a generator's 3,000 rows of which {demo.PLANTED_ROWS * demo.PLANTED_TIMES} copy "
                      f"{demo.PLANTED_ROWS} training rows {demo.PLANTED_TIMES} times each: the audit should name them.")
        right.button("Try the example", type="primary", key="audit_example", on_click=use_example)
current = st.toggle(f"Use the current table as the training table ({_ui.esc(data['label'])}, "
                    f"{len(data['train']):,} rows) and its test split as the hold-out",
                    key="audit_use_current", disabled=data["test"] is None,
                    help="Its schema and target come from the Data page.")
c1, c2, c3 = st.columns(3)
up_train = None if current else c1.file_uploader("Training table", type=FILES, key="audit_train")
up_hold = None if current else c2.file_uploader("Hold-out: real rows the generator never saw", type=FILES,
                                                key="audit_holdout")
up_syn = c3.file_uploader("Synthetic table (any generator)", type=FILES, key="audit_synthetic")
up_schema = None if current else st.file_uploader(
    "Schema (optional): SDV metadata JSON or memviz meta.json", type=["json"], key="audit_schema",
    help="Without one the schema is inferred from the training table; the target is asked for below.")
distance = st.radio("Distance", ["paper", "standardized"], horizontal=True, key="audit_distance",
                    format_func=readings.DISTANCE_LABELS.get,  # what each distance does, not only its name
                    help="The papers' distance rescales the numbers for each generated row, so it flags real rows "
                         "more often; compare each distance with its own floor, never across.")

# the files of this session: the uploads when given, else the ones given before a visit to another page
kept = st.session_state.get(KEPT)
if up_syn is not None:
    ups = (up_train, up_syn, up_hold, up_schema)
    kept = {"current": current, "names": tuple(u.name if u is not None else None for u in ups),
            "raws": tuple(u.getvalue() if u is not None else None for u in ups)}
    if current or up_train is not None:
        st.session_state[KEPT] = kept
elif kept is not None and kept["current"] == current and (current or up_train is None):
    shown = ", ".join(n for n in kept["names"] if n)
    left, right = st.columns([4, 1])
    left.caption((f"The example: {_ui.esc(shown)} (sample_data). Upload your own tables above to audit them."
                  if kept.get("example") else
                  f"Using the files you gave earlier in this session (kept with the runs, so a reload finds them): "
                  f"{_ui.esc(shown)}."))
    if right.button("Forget them", key="audit_forget"):
        st.session_state.pop(KEPT, None)
        st.session_state.pop("audit_saved", None)
        if PARAM in st.query_params:
            del st.query_params[PARAM]
        st.rerun()
else:
    kept = None

train = holdout = synthetic = None
digests = audits.digests(*kept["raws"]) if kept is not None else ("",)    # each file hashed once a run
digest = digests[0]
if kept is not None:      # kept with the runs, named in the address: a reload finds them
    saved = st.session_state.get("audit_saved")
    if saved is None or saved[0] != (kept["current"], digests):
        try:
            saved = ((kept["current"], digests), uploads.save_audit_files(_ui.root(), kept["names"], kept["raws"],
                                                                           kept["current"]))
        except MemvizError as exc:
            saved = None
            _ui.warning(f"These files are not kept for a reload: {exc}")
        st.session_state["audit_saved"] = saved
    if saved is not None:
        st.query_params[PARAM] = saved[1]
elif PARAM in st.query_params:
    del st.query_params[PARAM]
shadow.update({k: st.session_state[k] for k in OPTIONS if k in st.session_state})
# the target picked below, for the training table it was picked for (None: the table's suggestion)
chosen = st.session_state.get("audit_target") if st.session_state.get("audit_target_for") == digest else None
# the column kinds set on the schema table below, for the training table they were set for
kinds = tuple(st.session_state.get("audit_kinds", ())) if st.session_state.get("audit_kinds_for") == digest else ()
try:
    if kept is not None and kept["current"] and kept["raws"][1] is not None:
        train, holdout = data["train"], data["test"]
        synthetic = audits.companion_table(train, kept["names"][1], kept["raws"][1])
    elif kept is not None and kept["raws"][0] is not None and kept["raws"][1] is not None:
        names, raws = kept["names"], kept["raws"]
        train, synthetic, holdout = _ui.tables_of(names, digests, chosen, raws, kinds)
except MemvizError as exc:
    _ui.error(exc)
    if kinds:                   # a kind set on the schema table made the tables unreadable: undone, said
        st.session_state.pop("audit_kinds", None)
        st.caption("Your last change of a column's kind was undone.")
        if st.button("Show the tables again", key="audit_kinds_undo"):
            st.rerun()

if train is not None and not (kept or {}).get("current"):
    # the schema as read: the target asked for (the table's suggestion first), each column's kind and why
    with st.expander(f"Schema read from {train.source}: target {train.schema.target or 'none'}", expanded=False):
        frame = train.to_frame(row_id=False)
        choices = [c for c in frame.columns if c not in train.schema.key_columns and c not in train.schema.excluded]
        if st.session_state.get("audit_target_for") != digest or st.session_state.get("audit_target") not in choices:
            st.session_state["audit_target_for"] = digest
            st.session_state["audit_target"] = train.schema.target
        if train.schema.target in choices:
            st.selectbox(
                "Target (the label the attribute attack aims at)", choices, key="audit_target",
                help="Suggested from the table (a label is usually at one end and has few values); change it if it "
                     "is another column.")
        st.caption(_ui.esc(datasets.target_line(train.schema, frame)))
        key = train.schema.key
        if isinstance(key, str):
            why = datasets.column_reason(train.schema, key, frame[key] if key in frame else None)
            st.caption(_ui.esc(f"Row key: {key}: {why.removeprefix('row key: ')}."))   # the reason says "row key" too
        elif key:
            st.caption(_ui.esc(f"Row key: {' + '.join(key)} (together): names the rows, left out of the distance."))
        st.caption("Change a column's kind in the **kind** column: numerical, categorical, key (the column that names "
                   "your rows; several marked key name a row together) or excluded (left out of the distance); the audit "
                   "runs again.")
        shown = datasets.schema_editor_frame(train.schema, frame)
        shown = shown[shown["column"] != train.schema.target].reset_index(drop=True)
        edited = st.data_editor(
            shown, key=f"audit_schema_table_{len(kinds)}", hide_index=True, num_rows="fixed",
            disabled=["column", "dtype", "distinct", "missing %", "example", "why"],
            column_config={"kind": st.column_config.SelectboxColumn("kind", options=list(datasets.FEATURE_KINDS),
                                                                    required=True),
                           "why": st.column_config.TextColumn("why", width="large")})
        changed = audits.kind_edits(train.schema, edited, kinds)
        if changed != kinds:
            st.session_state["audit_kinds"], st.session_state["audit_kinds_for"] = changed, digest
            st.rerun()

if synthetic is None:
    st.info("Upload the training table and the synthetic table (and, to tell copying from resemblance, the "
            "hold-out): the audit starts by itself.")
    st.stop()
if holdout is None:
    _ui.warning("No hold-out: without real rows the model never saw, the audit cannot tell copying apart from "
                "the test's own floor.")

keys = (fingerprint(train), fingerprint(synthetic), fingerprint(holdout) if holdout is not None else "", distance)
# the verdict and everything read from it in one placeholder, replaced whole: while a new audit runs, the previous
# verdict is gone at once (it stayed on the page, readable, for the ~40 s of the next audit)
result = st.empty()
with result.container():
    if not _ui.audit_of.cached(*keys):
        st.caption("A new audit runs: the previous verdict is hidden until this one is in.")
    try:
        audit = _ui.audit_of(*keys, train, synthetic, holdout)
    except MemvizError as exc:
        _ui.error(exc)
        st.stop()

with result.container():
    # ------------------------------------------------------------------ the verdict
    card = audits.card(audit, f"{synthetic.source}: what the audit shows")
    with st.container(border=True, key="audit_headline"):
        st.markdown(f"**{_ui.esc(audit.verdict.sentence)}**")
        st.caption(_ui.esc(audits.rows_read(audit)))
        # how close the copies are, each against real rows never seen; the ratio test in full in the row below
        figures = audits.headline_figures(audit, ratio=False)
        if figures:
            for col, f in zip(st.columns(len(figures)), figures):
                col.metric(f.label, f.value, help=f.help)
                col.caption(_ui.esc(f.caption))
        st.caption("The paper's ratio test, against its floor:")
        c = st.columns(4)
        c[0].metric("the model's rows flagged", _ui.pct(audit.mem_ratio),
                    help="Share of generated rows whose nearest training row is 3× closer than the second nearest.")
        c[0].caption(f"{audit.n_memorized:,} of {audit.provenance.n_synthetic:,} generated rows")
        if audit.floor is not None:
            c[1].metric("floor: real rows never seen", _ui.pct(audit.floor),
                        help="Share of hold-out rows (real rows the model never trained on) the same test flags.")
            c[1].caption(f"95 %: {audit.floor_ci[0]:.1%} – {audit.floor_ci[1]:.1%} · "
                         f"{audit.provenance.n_holdout:,} hold-out rows")
            c[2].metric("above the floor (excess)", f"{100 * audit.excess:+.1f} points",
                        help="Mem ratio minus the floor, with Newcombe's 95 % interval for two proportions.")
            c[2].caption(f"95 %: {100 * audit.excess_ci[0]:+.1f} to {100 * audit.excess_ci[1]:+.1f} points")
            c[3].metric("copied beyond chance (copy share)", _ui.pct(max(0.0, audit.copy_share)),
                        help="excess / (1 − floor): the share of generated rows the model copied beyond what fresh "
                             "real rows would give; an average, so read it beside the closeness tests above.")
            lo, hi = audit.copy_share_ci
            c[3].caption(f"95 %: {max(0.0, lo):.1%} – {max(0.0, hi):.1%}" if audit.copy_share >= 0 else BELOW_FLOOR)
        else:
            c[1].metric("floor: real rows never seen", "not measured")
            c[2].metric("above the floor (excess)", "unknown")
            c[3].metric("copied beyond chance (copy share)", "unknown")
            ident = f"{audit.identical_share:.1%} of generated rows are identical to a training row"
            st.caption(ident + ".")
    _ui.verdict_card(dataclasses.replace(card, lines=card.lines[1:]), key="audit_verdict")   # the sentence is above
    region = audit.region_distances()
    if region is not None:      # the region the verdict names: a person checks its rows' distances here
        from memviz.viz.memorization import closeness_plot

        g, h, t, words = region
        _ui.show(closeness_plot(g, h, t, region=words), key="audit_region")

    # ------------------------------------------------------------------ other tests (as in the report)
    if len(audit.evidence):
        with st.container(border=True, key="audit_evidence"):
            st.markdown("**Other tests**, each against the hold-out (they support the verdict, never replace it)")
            for title, sentence in audits.evidence_lines(audit):
                st.markdown(f"{_ui.esc(title)}: {_ui.esc(sentence)}")

    # ------------------------------------------------------------------ the rows
    st.subheader("Over-copied training rows")
    over = audit.over_copied_rows
    if audit.floor is None:
        st.caption("The per-row test needs a hold-out.")
    elif over.empty:
        st.caption("No training row has more close copies than real rows the model never saw would give it. "
                   + _ui.esc(audit.row_test.sentence()))
    else:
        redact = st.toggle("Redact raw values (numbers binned, categories hashed)", value=True, key="audit_redact")
        shown = audits.over_copied_table(audit, train, redacted=redact)
        st.dataframe(shown, hide_index=True, height=300, key="audit_rows")
        st.caption(_ui.esc(audit.row_test.sentence()))

    # ------------------------------------------------------------------ downloads
    st.subheader("Take away")
    stem = audits.download_stem(synthetic.source)
    d1, d2, d3 = st.columns(3)
    redacted = d1.toggle("Redacted report", value=True, key="audit_report_redacted")
    _ui.download(d1, "Report (HTML)" + ("" if redacted else " (raw values)"),
                 lambda: audit.to_html(redacted=redacted, train=train, synthetic=synthetic).encode("utf-8"),
                 file_name=f"{stem}_report_{'redacted' if redacted else 'RAW_VALUES'}.html", mime="text/html",
                 type="primary", key="dl_audit_report")
    _ui.download(d2, "audit.json", lambda: audit.to_json().encode("utf-8"), file_name=f"{stem}_audit.json",
                 mime="application/json", key="dl_audit_json")
    _ui.download(d3, "Per-row table (CSV)", lambda: audits.rows_csv(audit, train), file_name=f"{stem}_rows.csv",
                 mime="text/csv", key="dl_audit_rows")
