"""Audit a synthetic table made by any generator: the training table, a hold-out and the synthetic
table in; the floor, the excess, the copy share, the over-copied rows and the verdict out, with the
same report and audit.json as `memviz audit`."""
import dataclasses

import streamlit as st

from memviz.app import audits, readings
from memviz.errors import MemvizError
from memviz.tables.data import fingerprint
from screens import _ui

FILES = ["csv", "parquet", "pq", "txt"]


@st.cache_resource(show_spinner="Auditing: every generated and hold-out row against its nearest training rows…",
                   max_entries=8)
def audit_of(train_fp: str, synthetic_fp: str, holdout_fp: str, distance: str, _train, _synthetic, _holdout):
    """One audit per (tables, distance): keyed by the tables' fingerprints, shared by every session."""
    return audits.tables_audit(_train, _synthetic, _holdout, distance=distance)


@st.cache_resource(show_spinner=False, max_entries=8)
def tables_of(names: tuple, digests: tuple, _raw: tuple):
    """The uploads parsed once per content (``digests``: their SHA-256)."""
    return audits.upload_tables(names[0], _raw[0], names[1], _raw[1], names[2], _raw[2], schema_name=names[3],
                                schema_raw=_raw[3])


st.title("Audit a synthetic table")
st.write("Upload the training table a generator learned from, a hold-out (real rows it never saw, same columns) and "
         "a synthetic table it made: any generator, CSV or Parquet. The audit measures how often the test flags the "
         "generated rows and the hold-out rows (the floor), what the model adds above that, and which training rows "
         "are copied far more than chance.")

data = _ui.ensure_data()
current = st.toggle(f"Use the current table as the training table ({_ui.esc(data['label'])}, "
                    f"{len(data['train']):,} rows) and its test split as the hold-out", value=False,
                    key="audit_use_current", disabled=data["test"] is None,
                    help="Its schema and target come from the Data page.")
c1, c2, c3 = st.columns(3)
up_train = None if current else c1.file_uploader("Training table", type=FILES, key="audit_train")
up_hold = None if current else c2.file_uploader("Hold-out: real rows the generator never saw", type=FILES,
                                                key="audit_holdout")
up_syn = c3.file_uploader("Synthetic table (any generator)", type=FILES, key="audit_synthetic")
up_schema = None if current else st.file_uploader(
    "Schema (optional): SDV metadata JSON or memviz meta.json", type=["json"], key="audit_schema",
    help="Without one the schema is inferred from the training table, with a label-like column as the target.")
distance = st.radio("Distance", ["paper", "standardized"], horizontal=True, key="audit_distance",
                    format_func=readings.DISTANCE_LABELS.get,  # what each distance does, not only its name
                    help="The papers' distance rescales the numbers for each generated row, so it flags real rows "
                         "more often; compare each distance with its own floor, never across.")

train = holdout = synthetic = None
try:
    if current and up_syn is not None:
        train, holdout = data["train"], data["test"]
        synthetic = audits.companion_table(train, up_syn.name, up_syn.getvalue())
    elif up_train is not None and up_syn is not None:
        ups = (up_train, up_syn, up_hold, up_schema)
        raws = tuple(u.getvalue() if u is not None else None for u in ups)
        names = tuple(u.name if u is not None else None for u in ups)
        train, synthetic, holdout = tables_of(names, audits.digests(*raws), raws)
except MemvizError as exc:
    _ui.error(exc)

if synthetic is None:
    st.info("Upload the training table and the synthetic table (and, to tell copying from resemblance, the "
            "hold-out): the audit starts by itself.")
    st.stop()
if holdout is None:
    _ui.warning("No hold-out: without real rows the model never saw, the audit cannot tell copying apart from "
                "the test's own floor.")

try:
    audit = audit_of(fingerprint(train), fingerprint(synthetic), fingerprint(holdout) if holdout is not None else "",
                     distance, train, synthetic, holdout)
except MemvizError as exc:
    _ui.error(exc)
    st.stop()

# ------------------------------------------------------------------ the verdict
card = audits.card(audit, f"{synthetic.source}: what the audit shows")
with st.container(border=True, key="audit_headline"):
    st.markdown(f"**{_ui.esc(audit.verdict.sentence)}**")
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
        c[3].metric("copied beyond chance (copy share)", _ui.pct(audit.copy_share),
                    help="excess / (1 − floor): the share of generated rows the model copied beyond what fresh "
                         "real rows would give.")
        lo, hi = audit.copy_share_ci
        c[3].caption(f"95 %: {lo:.1%} – {hi:.1%}")
    else:
        c[1].metric("floor: real rows never seen", "not measured")
        c[2].metric("above the floor (excess)", "unknown")
        c[3].metric("copied beyond chance (copy share)", "unknown")
    ident = f"{audit.identical_share:.1%} of generated rows are identical to a training row"
    if audit.holdout_identical_share is not None:
        ident += f" (real rows never seen: {audit.holdout_identical_share:.1%})"
    st.caption(ident + ".")
_ui.verdict_card(dataclasses.replace(card, lines=card.lines[1:]), key="audit_verdict")   # the sentence is above

# ------------------------------------------------------------------ the rows
st.subheader("Over-copied training rows")
over = audit.over_copied_rows
if audit.floor is None:
    st.caption("The per-row test needs a hold-out.")
elif over.empty:
    st.caption("No training row is copied more than fresh real rows would be (q < 0.05 after Benjamini–Hochberg). "
               + audit.row_test.sentence())
else:
    redact = st.toggle("Redact raw values (numbers binned, categories hashed)", value=True, key="audit_redact")
    shown = audits.over_copied_table(audit, train, redacted=redact)
    st.dataframe(shown, hide_index=True, height=300, key="audit_rows")
    st.caption(audit.row_test.sentence())

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
_ui.download(d3, "Per-row table (CSV)", lambda: audits.rows_csv(audit), file_name=f"{stem}_rows.csv",
             mime="text/csv", key="dl_audit_rows")
