"""Memorization: who is copied, how concentrated, per check; leak explorer; column heatmap."""
import streamlit as st

from memviz import leaks, viz
from memviz.app import runs
from memviz.dynamics import concentration, heavy_tail
from memviz.errors import MemvizError
from pages import _ui

_ui.through_app()

st.title("Memorization")
view = _ui.current_view()
if view is not None:
    dyn, pc = view.dynamics, view.per_check
    ht = heavy_tail(dyn)
    c = st.columns(5)
    c[0].metric("mem ratio (last check)", _ui.pct(pc["mem_ratio"].iloc[-1]),
                help="Share of generated rows whose nearest training row is 3× closer than the second nearest.")
    c[1].metric("Mem-AUC (last check)", f"{pc['mem_auc'].iloc[-1]:.3f}")
    c[2].metric("top 1% rows hold", _ui.pct(concentration(dyn, 0.01)), help="Share of all copies.")
    c[3].metric("rows never copied", _ui.pct(ht.zero_share))
    c[4].metric("most copies of one row", f"{ht.max_count:,}")

    left, right = st.columns(2)
    with left:
        log_y = st.toggle("Log scale for the row counts", value=True, key="hist_log")
        _ui.show(viz.copies_histogram(dyn, log_y=log_y), key="copies_hist")
    with right:
        _ui.show(viz.concentration_plot(dyn), key="concentration")
    _ui.show(viz.check_curves(pc), key="check_curves")

    st.subheader("Leak explorer")
    st.caption("The most-copied training rows, each beside the generated rows that copy it; highlighted cells "
               "equal the training row's value.")
    top = runs.most_copied_table(view, n=20)
    redact = st.toggle("Redact raw values (numbers binned, categories hashed)", value=False, key="redact")
    shown_top = top if not redact else top.assign(**leaks.redact(top[list(view.train.schema.columns)],
                                                                  view.train.schema, reference=view.train.data))
    st.dataframe(shown_top, hide_index=True, height=260, key="most_copied")
    if len(top):
        # "row N" only: copy counts grow during a live run, and a selectbox answers with its label
        row_id = st.selectbox("Training row", top["row_id"].tolist(), key="leak_row", format_func=lambda r: f"row {r}")
        try:
            lv = _ui.leak_view(str(view.path), runs.run_token(view.path), int(row_id))
        except MemvizError as exc:
            _ui.error(exc)
        else:
            st.markdown(f"**Training row {lv.row_id} and {len(lv.copies)} of its {lv.n_copies} generated copies** "
                        "(closest first; highlighted cells equal the training row)")
            if len(lv.copies):
                st.dataframe(leaks.style_matches(lv, redacted=redact, color="#ffe08a"), key="leak_table")
            else:
                st.caption("No stored generated row copies this training row.")

    st.subheader("Which columns leak")
    checks = view.result.per_check
    last = int(checks["check"].iloc[-1])
    chk = st.select_slider("Check", checks["check"].tolist(), value=last, key="heat_check",
                           format_func=lambda c: f"check {c} (epoch {int(checks.set_index('check').loc[c, 'epoch'])})")
    cl = _ui.column_leaks(str(view.path), runs.run_token(view.path), int(chk))
    if cl is None:
        st.info("This run did not store its generated rows (warm-up with --no-samples).")
    else:
        pair_kind = st.radio("Pairs among", ["memorized", "non-memorized"], horizontal=True, key="pair_kind")
        pairs = cl.pairs_memorized if pair_kind == "memorized" else cl.pairs_non_memorized
        _ui.show(viz.leak_heatmap(cl.columns, pairs), key="leak_heatmap")
