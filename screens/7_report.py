"""Report: the self-contained HTML report, the pruned training table, synthetic tables, results."""
from pathlib import Path

import streamlit as st

from memviz.app import audits, comparisons, reports, runs
from memviz.errors import MemvizError
from memviz.jobs import control as jobs
from screens import _ui

if _ui.page_fragment(__file__):     # a widget on this page reruns the page alone, not the app
    st.stop()

st.title("Report")
st.write("Everything to take away: a self-contained HTML report (opens offline, no external link) that starts "
         "with the verdict in plain words, the pruned training table and the comparison's tables.")

view = _ui.current_view(stop_message=False)
dc = runs.current_tuning(st.session_state.get(_ui.PRUNE), view)
# the run's {T: ranking} at the tuned k, from the Tune & prune page's cache: neither the report's selection and
# curve nor the pruned table rank the rows again
ranked = _ui.rankings(str(view.path), runs.run_token(view.path), dc.k) if view is not None else None

compares = jobs.list_jobs(_ui.root(), kind="compare")
with_results = [o for o in compares["out"] if (Path(o) / "results.csv").exists()]
finished = set(compares.loc[compares["state"] == "finished", "out"])
# stable labels (no state): a selectbox answers with the label it showed
labels = comparisons.compare_labels(compares)
options = [""] + with_results
if "report_compare" not in st.session_state or st.session_state["report_compare"] not in options:
    # by default the latest finished comparison ranked on this run, else the latest finished one (its
    # section then says it is about another run); none when there is none
    done_ = [o for o in with_results if o in finished]
    st.session_state["report_compare"] = next((o for o in done_ if view is not None and
                                               audits.ranked_on(o, view.path)), done_[0] if done_ else "")
c1, c2 = st.columns([2, 1])
pick = c1.selectbox("Comparison to include", options, key="report_compare",
                    format_func=lambda o: labels.get(o, o) if o else "— none —",
                    help="The latest finished comparison is chosen for you; pick another or none.")
redacted = c2.toggle("Redact row values", value=True, key="report_redacted",
                     help="Training and generated rows appear as ranges (each holding at least 10 training rows) and "
                          "category hashes keyed for this report; class values in figures are hashed too.")
cv = None
if pick:
    try:
        cv = _ui.compare_view(pick, comparisons.compare_token(pick))
    except MemvizError as exc:
        _ui.error(exc)

if view is None and cv is None:
    st.info("Open a warm-up run (sidebar) or include a comparison to build a report.")
else:
    st.caption("The report opens with these sentences; each section names the run or comparison it draws on and "
               "the DynamicCut settings it used:")
    for i, sec in enumerate(reports.sections(view, cv, params=dc.dc)):
        st.markdown(f"**{_ui.esc(sec.heading)}**")
        if sec.note:
            _ui.warning(sec.note)
        if sec.card is not None:
            _ui.verdict_card(sec.card, key="report_verdict" if i == 0 else f"report_verdict_{i}")
    st.caption(("redacted" if redacted else "**RAW VALUES INCLUDED**") + " · p, k and T of the run are set on "
               "**Tune & prune**")

    def build() -> bytes:
        return reports.report_html(view, cv, params=dc.dc, ranked=ranked, redacted=redacted).encode("utf-8")

    _ui.download(st, "Download the HTML report" + ("" if redacted else " (raw values)"), build,
                 file_name=reports.report_name(view, cv, redacted), mime="text/html",
                 type="primary", key="dl_report")

st.subheader("Tables")
if view is not None:
    try:
        prev = runs.prune_preview(view, params=dc.dc, ranked=ranked)
    except MemvizError as exc:
        _ui.error(exc)
    else:
        _ui.download(st, f"Pruned training table ({prev.n_rows - prev.n_remove:,} rows, CSV)",
                     lambda: runs.pruned_csv(view, prev.selection.removed),
                     file_name=f"{view.run_id}_pruned.csv", mime="text/csv", key="dl_pruned_report")
if cv is not None:
    c1, c2 = st.columns(2)
    _ui.download(c1, "Results (CSV, readable column names)", lambda: reports.results_csv(cv),
                 file_name=f"{cv.path.name}_results.csv", mime="text/csv", key="dl_results")
    _ui.download(c2, "What each results column means (CSV)", lambda: reports.dictionary_csv(cv),
                 file_name=f"{cv.path.name}_data_dictionary.csv", mime="text/csv", key="dl_dictionary")
    files = reports.synthetic_downloads(cv)
    if files:
        st.markdown("**Synthetic tables**")
        cols = st.columns(3)
        for i, d in enumerate(files):
            _ui.download(cols[i % 3], d.label, (lambda p=d.path: reports.table_csv(p)), file_name=d.file_name,
                         mime="text/csv", key=f"dl_syn_{d.path.name}")
if view is None and cv is None:
    st.caption("Nothing to download yet.")
