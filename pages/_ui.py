"""Shared Streamlit helpers of the pages: session state, cached loaders, figure rendering.

Not a page (st.navigation lists the pages explicitly). Caches are keyed on run ids and
the manifest's modification time (:func:`memviz.dashboard.run_token`), so a finished
run is read once for every session, and a live run is re-read only after it wrote.
"""
from __future__ import annotations

from pathlib import Path

import streamlit as st

from memviz import dashboard as dash
from memviz import jobs
from memviz.errors import MemvizError

DATA = "memviz_data"            # session key: the current DataState
CURRENT = "memviz_run"          # session key: the current run's path ("" for none)
RUN = "run_pick"                # key of the sidebar's run selectbox (seeded from CURRENT on every run)
PENDING_RUN = "memviz_pending_run"


# -------------------------------------------------------------------------- routing
def through_app() -> None:
    """Make sure a page runs inside app.py (router and sidebar), never on its own.

    Streamlit treats a ``pages/`` folder next to the main script as its legacy multipage
    mode until app.py has called st.navigation once; a deep link (``/tune``) opened first
    after a server start would run the page file alone, without the sidebar. Switch that
    mode off and rerun: the rerun goes through app.py, which routes to the same page
    (its url path equals the legacy one).
    """
    from streamlit.runtime.pages_manager import PagesManager

    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()


# ------------------------------------------------------------------ cached loaders
@st.cache_resource(show_spinner=False, max_entries=8)
def raw_choice(key: str) -> dash.RawData:
    return dash.load_choice(key)


@st.cache_resource(show_spinner=False, max_entries=4)
def raw_upload(name: str, raw: bytes, test_name: str | None, test_raw: bytes | None) -> dash.RawData:
    return dash.raw_from_upload(name, raw, test_name, test_raw)


@st.cache_resource(show_spinner="Reading the run…", max_entries=12)
def run_view(run_dir: str, token: int) -> dash.RunView:
    return dash.load_run(run_dir)


@st.cache_resource(show_spinner="Comparing generated rows with their nearest training rows…", max_entries=12)
def column_leaks(run_dir: str, token: int, check: int | None):
    return dash.column_leaks(run_view(run_dir, token), check)


@st.cache_resource(show_spinner=False, max_entries=64)
def leak_view(run_dir: str, token: int, row_id: int, limit: int = 20):
    """A training row beside its generated copies (reads the stored samples of their checks once)."""
    from memviz import leaks

    view = run_view(run_dir, token)
    return leaks.copies_of(view.result, int(row_id), limit=limit, checks=view.result.checks, train=view.train)


@st.cache_resource(show_spinner=False, max_entries=64)
def early_curve(run_dir: str, token: int, p: float, k: int):
    """Precision / recall / Jaccard of DynamicCut at every check epoch vs the final Top group."""
    from memviz.dynamiccut import early_identification_curve

    return early_identification_curve(run_view(run_dir, token).dynamics, p=p, k=k)


@st.cache_resource(show_spinner=False, max_entries=12)
def compare_view(out_dir: str, token: int) -> dash.CompareView:
    return dash.load_compare(out_dir)


@st.cache_data(show_spinner=False, ttl=3)
def runs(root: str):
    return dash.runs_table(root)


def root() -> str:
    return str(jobs.runs_root())


# ------------------------------------------------------------------- session state
def set_data(train, test, label: str) -> None:
    st.session_state[DATA] = {"train": train, "test": test, "label": label}


def ensure_data() -> dict:
    """The current dataset; on a first visit the bundled sample with its test file."""
    if DATA not in st.session_state:
        raw = raw_choice("sample")
        train, test = dash.build_tables(raw, raw.schema, "file")
        set_data(train, test, raw.label)
    return st.session_state[DATA]


def select_run(run_dir: str | Path | None) -> None:
    """Make a run the current one (applied before the sidebar's selectbox is drawn)."""
    st.session_state[PENDING_RUN] = str(run_dir) if run_dir else ""


def run_labels(runs) -> dict:
    """{path: label} for run pickers; a path keeps its first label for the whole session.

    A selectbox sends its choice back as the *label* it showed, so a label that changes
    while a run progresses (status, check count) would not match any option on the next
    rerun: Streamlit then hands back the stale label itself as the value, which used to
    drop the current run on a page switch right after a warm-up finished. Labels hold
    only what never changes (:func:`memviz.dashboard.runs_table`: run id, dataset); the
    status is shown beside the picker. The memo keeps the label of a run first shown
    before its manifest existed (its folder name) until the session ends.
    """
    memo = st.session_state.setdefault("memviz_run_labels", {})
    for path, label in zip(runs["path"], runs["label"]):
        memo.setdefault(path, label)
    return memo


def run_label(memo: dict, path: str) -> str:
    if not path:
        return "— none —"
    return memo.setdefault(path, Path(path).name)


def job_state(run_dir: str) -> str:
    """The state of the background job behind a run that has no manifest yet."""
    try:
        return jobs.job_status(jobs.job_for(run_dir)).state
    except MemvizError:
        return "starting"


def current_run_dir() -> str | None:
    return st.session_state.get(CURRENT) or None


def current_view(stop_message: bool = True) -> dash.RunView | None:
    """The current run, opened (cached); None with an info box when there is none or it has no check yet."""
    run_dir = current_run_dir()
    if run_dir is None:
        if stop_message:
            st.info("No warm-up run selected. Start one on the **Warm-up** page or pick a saved run in the sidebar.")
        return None
    try:
        return run_view(run_dir, dash.run_token(run_dir))
    except MemvizError as exc:
        if stop_message:
            st.info(f"This run cannot be shown yet: {exc}")
        return None


# ------------------------------------------------------------------------ rendering
def show(fig, key: str | None = None) -> None:
    """A plotly figure with its one-sentence reading guide under it."""
    from memviz import plots

    st.plotly_chart(fig, width="stretch", key=key, config={"displaylogo": False})
    text = plots.caption(fig)
    if text:
        st.caption(text)


def error(exc: Exception) -> None:
    st.error(str(exc), icon=":material/error:")


def pct(v) -> str:
    try:
        return "–" if v is None or v != v else f"{float(v):.1%}"
    except (TypeError, ValueError):
        return "–"


if __name__ == "__main__":  # opened as a legacy page (/ui): go through the router
    through_app()
