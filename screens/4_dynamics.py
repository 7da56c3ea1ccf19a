"""Dynamics: do the Top rows behave differently, beyond what a warm-up with no row-level dynamics
gives? Then the paper's views and the timeline of chosen rows."""
import streamlit as st

from memviz import viz
from memviz.app import readings, runs
from memviz.errors import MemvizError
from screens import _ui

if _ui.page_fragment(__file__):     # a widget on this page reruns the page alone, not the app
    st.stop()

#: display names of the null comparison's columns
NULL_NAMES = {"kind": "definition", "label": "statistic", "value": "Top", "baseline": "Non-Top (or random)",
              "observed": "observed effect", "null_median": "null median", "null_range": "null 2.5–97.5 %",
              "verdict": "verdict"}

st.title("Dynamics")
view = _ui.current_view()
if view is not None:
    dyn = view.dynamics
    path, token = str(view.path), runs.run_token(view.path)

    # the plain one-line summary first (completed with the null's verdicts once they are in)
    summary_slot = st.empty()
    summary_slot.markdown(f"**{_ui.esc(readings.dynamics_sentence(dyn))}**")
    # filled last: the paper's views below show at once while the null is simulated
    null_slot = st.container()
    st.subheader("The paper's views (Top chosen from the same counts)")
    st.caption(f"Top = the {dyn.top_frac:.0%} most-copied training rows ({int(dyn.top.sum()):,} rows) over the "
               f"whole warm-up; Non-Top = the other {int((~dyn.top).sum()):,}. Because Top is defined by these "
               "counts, Top and Non-Top differ here even without any dynamics.")
    left, right = st.columns(2)
    with left:
        _ui.show(viz.first_epoch_plot(dyn), key="first_epoch")
    with right:
        _ui.show(viz.forgetting_plot(dyn), key="forgetting")
    quantity = st.radio("Over epochs", ["cumulative", "mem_auc"], horizontal=True, key="band_quantity",
                        format_func={"cumulative": "cumulative copy count", "mem_auc": "per-row Mem-AUC"}.get)
    _ui.show(viz.group_band_plot(dyn, quantity=quantity), key="band")

    with null_slot:
        st.subheader("Do the findings beat a null with no dynamics?")
        auto = readings.null_is_quick(view)
        asked = st.session_state.setdefault("memviz_null_asked", set())
        if not auto and (path, token) not in asked and (path, token) not in _ui.null_done():
            st.caption("The paper's statistics below choose the Top group from the very counts they test, so they "
                       "differ between Top and Non-Top even when nothing changes during training. Testing them "
                       f"against a null model simulates {readings.NULL_REPLICATES} warm-ups of this size (seconds to a "
                       "minute here; kept for this run afterwards).")
            if st.button("Test the findings against the null", key="run_null"):
                asked.add((path, token))
                st.rerun()
        else:
            try:
                findings = _ui.null_comparison(path, token)
            except MemvizError as exc:
                st.info(f"The test against the null cannot run on this run: {_ui.esc(exc)}.")
            else:
                st.caption(f"Null: every training row keeps a fixed chance of being copied, with the warm-up's own "
                           f"number of copies at each check, so nothing rises or falls on its own "
                           f"({findings.attrs['n_replicates']} simulated warm-ups). A finding holds only if the run "
                           "lies beyond the null's central 95 % on the paper's side. The paper's definitions pick the "
                           "Top group from the very counts they test (circular); the non-circular ones form groups "
                           "on the odd checks and measure on the even ones, so read those.")
                summary_slot.markdown(f"**{_ui.esc(readings.dynamics_sentence(dyn, findings))}**")
                _ui.show(viz.null_findings_plot(findings), key="null_findings")
                st.dataframe(readings.display_names(readings.findings_table(findings), NULL_NAMES), hide_index=True,
                             key="null_table")

    st.subheader("Timeline of chosen rows")
    top = runs.most_copied_table(view, n=200)
    options = top["row_id"].astype(int).tolist()
    train = view.train
    name = train.key_header()            # rows are typed and shown by the user's key where the table has one
    chosen = st.multiselect("Training rows (the 200 most-copied)", options, default=options[:10], key="timeline_rows",
                            format_func=lambda r: runs.row_label(train, r))
    typed = st.text_input(f"Other training rows ({name} values, " + ("rows separated by ';')" if train.composite else
                                                                     "separated by commas)"), key="timeline_more",
                          help=("Each row typed as shown, e.g. " + train.row_names(options[:1])[0] + "; rows "
                                "separated by ';', each part matched exactly." if train.composite and options else
                                f"Each item is one value of your row key {name}, matched exactly." if train.key else
                                "Each number is one row_id (the row's 0-based position in the training file), "
                                "matched exactly."))
    more, bad = readings.parse_rows(typed, train, dyn.row_ids)
    if bad:
        st.warning(f"Not a {name} of this run's training rows (ignored):" if train.key else
                   "Not a training row_id of this run (ignored):")
        _ui.user_text(", ".join(bad))
    ids = list(dict.fromkeys([int(r) for r in chosen] + more))
    if ids:
        names = [runs.row_label(train, r) for r in ids] if train.key else None
        _ui.show(viz.row_timeline(dyn, ids, names=names), key="timeline")
    else:
        st.info("Choose at least one row.")
