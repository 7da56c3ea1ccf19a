"""Dynamics: Top vs Non-Top rows over the warm-up, and the timeline of chosen rows."""
import streamlit as st

from memviz import viz
from memviz.app import runs
from pages import _ui

_ui.through_app()

st.title("Dynamics")
view = _ui.current_view()
if view is not None:
    dyn = view.dynamics
    st.caption(f"Top = the {dyn.top_frac:.0%} most-copied training rows ({int(dyn.top.sum()):,} rows) over the "
               f"whole warm-up; Non-Top = the other {int((~dyn.top).sum()):,}.")
    left, right = st.columns(2)
    with left:
        _ui.show(viz.first_epoch_plot(dyn), key="first_epoch")
    with right:
        _ui.show(viz.forgetting_plot(dyn), key="forgetting")
    quantity = st.radio("Over epochs", ["cumulative", "mem_auc"], horizontal=True, key="band_quantity",
                        format_func={"cumulative": "cumulative copy count", "mem_auc": "per-row Mem-AUC"}.get)
    _ui.show(viz.group_band_plot(dyn, quantity=quantity), key="band")

    st.subheader("Timeline of chosen rows")
    top = runs.most_copied_table(view, n=200)
    options = top["row_id"].astype(int).tolist()
    chosen = st.multiselect("Training rows (row_id)", options, default=options[:10], key="timeline_rows",
                            accept_new_options=True,
                            help="The 200 most-copied rows are offered (10 pre-selected); type any row_id to add it.")
    known = set(dyn.row_ids.tolist())
    ids, bad = [], []
    for r in chosen:
        try:
            (ids if int(r) in known else bad).append(int(r))
        except (TypeError, ValueError):
            bad.append(r)
    if bad:
        st.warning(f"Not a training row_id of this run: {', '.join(map(str, bad))}")
    if ids:
        _ui.show(viz.row_timeline(dyn, ids), key="timeline")
    else:
        st.info("Choose at least one row.")
