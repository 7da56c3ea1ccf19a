"""Shared Streamlit helpers of the pages: session state, cached loaders, figure rendering.

Not a page (st.navigation lists the pages explicitly). Caches are keyed on run ids and
the manifest's modification time (:func:`memviz.app.runs.run_token`), so a finished
run is read once for every session, and a live run is re-read only after it wrote.
"""
from __future__ import annotations

import functools
import re
import threading
from pathlib import Path

import streamlit as st

from memviz.app import (
    comparisons,
    datasets,
    demo,
    glossary,
    progress,
    readings,
    runs,
    uploads,
    why,
)
from memviz.errors import MemvizError
from memviz.jobs import control as jobs
from memviz.tables.data import fingerprint
from memviz.text import inert, pct, points, qvalue  # noqa: F401 (the screens' formatters: _ui.pct, ...)

DATA = "memviz_data"            # session key: the current DataState
CURRENT = "memviz_run"          # session key: the current run's path ("" for none)
RUN = "run_pick"                # key of the sidebar's run selectbox (seeded from CURRENT on every run)
PENDING_RUN = "memviz_pending_run"
SWITCHED = "memviz_switched"     # session key: the table was switched to the current run's (said once)
PRUNE = "dc_params"             # session key: DynamicCut's (p, k, T) as tuned for one run (runs.PruneParams)
TABLE_PARAM = "table"           # URL parameter: the kept table in use (uploads.save_tables), so a reload finds it
#: pages that analyse the current run: they show the "run in progress" banner while it goes on
ANALYSIS_PAGES = ("memorization", "dynamics", "tune", "compare", "report")


# ------------------------------------------------------------------ user text
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:=&^\"'@])")


def esc(text) -> str:
    """User text (a column name, a category, a file name, an error message) made inert for Markdown.

    Every ASCII punctuation character gets a backslash (CommonMark shows an escaped character
    as itself), so ``[x](http://...)`` stays text, ``![t](url)`` fetches nothing, ``:red[x]``
    and ``:material/...:`` are not directives and ``<b>`` is not HTML. Line breaks become
    spaces: a message is one line; a bare URL, ``www.`` address or e-mail address gets a
    zero-width joiner in its scheme or ``@`` (:func:`memviz.text.inert`), so the
    Markdown renderer's autolinker finds no link in it.
    """
    return _MD_SPECIAL.sub(r"\\\1", inert(text))


# -------------------------------------------------------------------------- routing
def pages() -> list:
    """The app's pages (app.py routes them with st.navigation from screens/, so Streamlit's
    legacy pages/ folder mode never starts); url paths are the file names without their number."""
    return [
        st.Page("screens/1_data.py", title="Data", icon=":material/table_chart:", default=True),
        st.Page("screens/2_warmup.py", title="Warm-up", icon=":material/local_fire_department:", url_path="warmup"),
        st.Page("screens/3_memorization.py", title="Memorization", icon=":material/content_copy:",
                url_path="memorization"),
        st.Page("screens/4_dynamics.py", title="Dynamics", icon=":material/timeline:", url_path="dynamics"),
        st.Page("screens/5_tune.py", title="Tune & prune", icon=":material/content_cut:", url_path="tune"),
        st.Page("screens/6_compare.py", title="Compare", icon=":material/balance:", url_path="compare"),
        st.Page("screens/7_report.py", title="Report", icon=":material/description:", url_path="report"),
        st.Page("screens/8_audit.py", title="Audit a synthetic table", icon=":material/fact_check:", url_path="audit"),
    ]


_PAGE = threading.local()      # set while a page's script runs inside its fragment (page_fragment)


@functools.lru_cache(maxsize=32)
def _page_code(path: str, mtime_ns: int):
    return compile(Path(path).read_text(encoding="utf-8"), path, "exec")


def page_fragment(path: str) -> bool:
    """Run the calling page's script (``path``: its ``__file__``) as one fragment: a widget moved on the page then
    reruns the page alone, not the app (the router, the sidebar's table, run list and progress line). Returns True
    in the app's run, once the fragment has run the page (the caller stops there: its body has run), False inside
    the fragment (the caller goes on with its body). Everything else is as before: st.rerun() reruns the app,
    st.stop() stops the run, a fragment inside the page is a fragment of the page."""
    if getattr(_PAGE, "inside", False):
        return False
    code = _page_code(str(path), Path(path).stat().st_mtime_ns)

    @st.fragment
    def page():
        _PAGE.inside = True
        try:
            exec(code, {"__name__": "__main__", "__file__": str(path)})
        finally:
            _PAGE.inside = False

    page()
    return True


def session_id() -> str:
    """This browser session's id ("" outside a Streamlit run): the jobs of one session are bounded
    (:func:`memviz.jobs.control.check_room_for`)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return str(ctx.session_id) if ctx is not None else ""


# ------------------------------------------------------------------ cached loaders
# Parsed tables, runs and audits: one budget in bytes for all of them ($MEMVIZ_UPLOAD_CACHE_BYTES,
# memviz.app.uploads.ByteCache), not a number of entries (four 72 MB uploads took the server to 4.2 GB)
@uploads.byte_cached()
def raw_choice(key: str) -> datasets.RawData:
    return datasets.load_choice(key)


@uploads.byte_cached()  # bounded in bytes, not entries ($MEMVIZ_UPLOAD_CACHE_BYTES)
def raw_upload(name: str, raw: bytes, test_name: str | None, test_raw: bytes | None) -> datasets.RawData:
    return datasets.raw_from_upload(name, raw, test_name, test_raw)


@uploads.byte_cached()
def raw_kept(root_dir: str, key: str) -> datasets.RawData:
    """An upload kept under the runs root (:func:`memviz.app.uploads.load_upload`)."""
    return uploads.load_upload(root_dir, key)


@uploads.byte_cached()
def kept_tables(root_dir: str, key: str):
    """A table in use kept under the runs root (:func:`memviz.app.uploads.load_tables`)."""
    return uploads.load_tables(root_dir, key)


@uploads.byte_cached()
def tables_of(names: tuple, digests: tuple, target: str | None, _raw: tuple, overrides: tuple = ()):
    """The Audit page's uploads parsed once per content (``digests``: their SHA-256), target (None: the
    table's suggestion) and the user's column kinds (``overrides``: (column, kind) pairs)."""
    from memviz.app import audits

    return audits.upload_tables(names[0], _raw[0], names[1], _raw[1], names[2], _raw[2], schema_name=names[3],
                                schema_raw=_raw[3], target=target, overrides=overrides)


@uploads.byte_cached()
def audit_of(train_fp: str, synthetic_fp: str, holdout_fp: str, distance: str, _train, _synthetic, _holdout):
    """The Audit page's audit per (tables, distance): keyed by the tables' fingerprints, shared by every session."""
    from memviz.app import audits

    with st.spinner("Auditing: every generated and hold-out row against its nearest training rows…"):
        return audits.tables_audit(_train, _synthetic, _holdout, distance=distance)


@st.cache_data(show_spinner=False, max_entries=64)
def run_fingerprint(run_dir: str, token: int) -> str:
    """The fingerprint of the table a run was trained on ("" when unknown)."""
    try:
        return str(((runs.RunStore(run_dir).manifest().get("data")) or {}).get("fingerprint") or "")
    except (MemvizError, AttributeError, TypeError):
        return ""


@uploads.byte_cached()
def run_view(run_dir: str, token: int) -> runs.RunView:
    with st.spinner("Reading the run…"):
        return runs.load_run(run_dir)


@st.cache_resource(show_spinner="Comparing generated rows with their nearest training rows…", max_entries=12)
def column_leaks(run_dir: str, token: int, check: int | None):
    return runs.column_leaks(run_view(run_dir, token), check)


@st.cache_resource(show_spinner=False, max_entries=64)
def leak_view(run_dir: str, token: int, row_id: int, limit: int = 20):
    """A training row beside its generated copies (reads the stored samples of their checks once)."""
    return runs.leak_view(run_view(run_dir, token), int(row_id), limit=limit)


def risk_factors(run_dir: str, token: int):
    """The risk factors of a run's training rows (:func:`memviz.app.why.run_factors`): computed once per training
    table (:func:`factors_of`), not again at every check of a live run."""
    return factors_of(run_dir, run_fingerprint(run_dir, token) or str(token), token)


@st.cache_resource(show_spinner="Measuring how isolated, rare and extreme each training row is…", max_entries=12)
def factors_of(run_dir: str, fingerprint: str, _token: int):
    """:func:`risk_factors` keyed by the run's training table (its fingerprint), whatever check the run is at."""
    return why.run_factors(run_view(run_dir, _token))


@st.cache_resource(show_spinner="Explaining which rows are in the Top group (a model and its SHAP values)…",
                   max_entries=12)
def run_why(run_dir: str, token: int):
    """The run's factors and the model of its Top group (:func:`memviz.app.why.why_of`)."""
    return why.why_of(run_view(run_dir, token), risk_factors(run_dir, token))


@st.cache_resource(show_spinner="Ranking the rows by isolation (no warm-up)…", max_entries=24)
def isolation_preview(run_dir: str, token: int, p: float, k: int, T: int, _params, _removed):
    """The isolation cut at DynamicCut's p beside DynamicCut's selection at (p, k, T) (``_params``, checked by the
    page; cached by their values), whose removed row_ids are ``_removed`` (:func:`memviz.app.why.isolation_preview`)."""
    return why.isolation_preview(run_view(run_dir, token), _params, _removed)


@st.cache_resource(show_spinner="Ranking the rows at every check…", max_entries=24)
def rankings(run_dir: str, token: int, k: int) -> dict:
    """{T: DynamicCut's ranking at (k, T)} for every check epoch, once per run and k: a p move on
    Tune & prune is then a slice (:class:`memviz.app.runs.Ranking`), not a rescoring."""
    return runs.rankings(run_view(run_dir, token), int(k))


@uploads.byte_cached()
def redacted_table(run_dir: str, token: int):
    """The run's whole training table redacted once (:func:`memviz.app.runs.redacted_table`)."""
    return runs.redacted_table(run_view(run_dir, token))


@st.cache_resource(show_spinner=False, max_entries=12)
def compare_view(out_dir: str, token: int) -> comparisons.CompareView:
    return comparisons.load_compare(out_dir)


@st.cache_resource(show_spinner=False, max_entries=8)
def demo_installed(root: str) -> bool:
    """The bundled sample's finished demo run and comparison, copied into an empty runs root once per server
    (:func:`memviz.app.demo.install`; ``$MEMVIZ_DEMO=0``: never), so every page has something to show."""
    return demo.install(root)


@st.cache_data(show_spinner=False, ttl=3)
def run_list(root: str):
    return runs.runs_table(root)


def root() -> str:
    return str(jobs.runs_root())


# ------------------------------------------------------------------- session state
def set_data(train, test, label: str, choice: str = "sample", key: str | None = None,
             columns: list | None = None) -> None:
    """Make a table the current one; ``key``: where it is kept under the runs root (None: not kept);
    ``columns``: the user's column order (for downloads)."""
    st.session_state[DATA] = {"train": train, "test": test, "label": label, "choice": choice, "key": key,
                              "columns": columns}


def use_table(train, test, label: str, choice: str, columns: list | None = None) -> str:
    """The Data page's "Use this table": keep it with the runs (a reload finds it) and make it current."""
    key = uploads.save_tables(root(), train, test, label, choice)
    set_data(train, test, label, choice, key, columns)
    return key


def _restore_data() -> bool:
    """After a reload: the table named in the URL, else the kept table the URL's run was trained on."""
    key = st.query_params.get(TABLE_PARAM)
    if not key:
        run_dir = jobs.run_dir_named(st.query_params.get("run"), root())   # None for a NUL, a path, no run
        if run_dir is not None:
            key = uploads.tables_for(root(), run_fingerprint(str(run_dir), runs.run_token(run_dir)))
    if not key:
        return False
    try:
        train, test, label, choice = kept_tables(root(), str(key))
    except MemvizError:
        return False
    set_data(train, test, label, choice, str(key))
    return True


def ensure_data(run_dir: str | None = None) -> dict:
    """The current dataset: after a reload the one kept with the runs (see :func:`_restore_data`),
    on a first visit the bundled sample with its test file; with ``run_dir`` (the sidebar's
    current run), the table that run was trained on (:func:`align_data`)."""
    if DATA not in st.session_state and not _restore_data():
        raw = raw_choice("sample")
        train, test = datasets.build_tables(raw, raw.schema, "file")
        set_data(train, test, raw.label, columns=list(raw.frame.columns))
    if run_dir:
        align_data(run_dir)
    return st.session_state[DATA]


def data_fingerprint(data: dict) -> str:
    """The fingerprint of the session's training table (computed once per table)."""
    if not data.get("fingerprint"):
        data["fingerprint"] = fingerprint(data["train"])
    return data["fingerprint"]


@uploads.byte_cached()
def run_tables(run_dir: str, token: int):
    with st.spinner("Opening the table this run was trained on…"):
        return runs.run_tables(run_dir)


def align_data(run_dir: str) -> None:
    """One table per session: when the current run was trained on another table than the
    session's, make the run's table current (the kept copy of the Data page when there is one,
    else the run's own rows and hold-out) and say so once."""
    data = st.session_state[DATA]
    token = runs.run_token(run_dir)
    run_print = run_fingerprint(run_dir, token)
    if not run_print or run_print == data_fingerprint(data):
        return
    key = uploads.tables_for(root(), run_print)
    try:
        if key:
            train, test, label, choice = kept_tables(root(), key)
        else:
            (train, test, label), choice = run_tables(run_dir, token), f"run:{Path(run_dir).name}"
    except MemvizError:
        return  # an unreadable run: its pages say why
    set_data(train, test, label, choice, key)
    st.session_state[DATA]["fingerprint"] = run_print
    # said beside the dataset in the sidebar (app.py), once: a toast covered the top right of the page
    st.session_state[SWITCHED] = (f"Switched the table to {esc(label)}: the table run {esc(Path(run_dir).name)} "
                                  "was trained on.")


def select_run(run_dir: str | Path | None) -> None:
    """Make a run the current one (applied before the sidebar's selectbox is drawn)."""
    st.session_state[PENDING_RUN] = str(run_dir) if run_dir else ""


def run_labels(runs) -> dict:
    """{path: label} for run pickers; a path keeps its first label for the whole session.

    A selectbox sends its choice back as the *label* it showed, so a label that changes
    while a run progresses (status, check count) would not match any option on the next
    rerun: Streamlit then hands back the stale label itself as the value, which used to
    drop the current run on a page switch right after a warm-up finished. Labels hold
    only what never changes (:func:`memviz.app.runs.runs_table`: run id, dataset); the
    status is shown beside the picker. The memo keeps the label of a run first shown
    before its manifest existed (its folder name) until the session ends.
    """
    memo = st.session_state.setdefault("memviz_run_labels", {})
    for path, label in zip(runs["path"], runs["label"]):
        memo.setdefault(path, label)
    return memo


_JOB_ID = re.compile(r"^(\d{4})(\d{2})(\d{2})-(\d{2})(\d{2})(\d{2})-(\w+)-([0-9a-f]+)$")


def short_run(label: str) -> str:
    """A run's label short enough for the sidebar: ``adult · 05-14 12:00 · a1b2c3`` for a dashboard
    run id (``20250514-120000-warmup-a1b2c3 · adult``); other labels as they are."""
    run_id, _, dataset = str(label).partition(" · ")
    m = _JOB_ID.match(run_id)
    if not m:
        return str(label)
    y, mo, d, h, mi, _, _, tag = m.groups()
    return " · ".join(p for p in (dataset, f"{mo}-{d} {h}:{mi}", tag) if p)


def run_label(memo: dict, path: str) -> str:
    if not path:
        return "— none —"
    return short_run(memo.setdefault(path, Path(path).name))


def job_readout(run_dir: str) -> str:
    """The one progress line of a run or comparison (:func:`memviz.app.progress.readout`), the same
    in the sidebar, on its page and in Saved runs."""
    return progress.readout(run_dir)


def progress_bars(pr) -> None:
    """A job's bar (:class:`memviz.app.progress.Progress`) under its one readout. A live warm-up has two: its
    training, which follows the epochs the readout names, and its checks measured (they trail the training and
    held one bar back, which then stood still while the epochs moved)."""
    s = pr.status
    if s.kind == "warmup" and not s.final and s.checks_total:
        st.progress(min(1.0, s.done / s.total) if s.total else 0.0, text=esc(pr.readout()))
        n = len(s.checks)
        st.progress(min(1.0, n / s.checks_total), text=f"checks measured: {n:,} of {s.checks_total:,}")
    else:
        st.progress(pr.fraction, text=esc(pr.readout()))


def finish_notice(job, state: str) -> None:
    """A toast, once per session and job, when a job the session watched reaches a final state."""
    seen = st.session_state.setdefault("memviz_notified", set())
    if job.job_id in seen:
        return
    seen.add(job.job_id)
    what = "Warm-up" if job.kind == "warmup" else "Comparison"
    icon = ":material/check_circle:" if state == "finished" else ":material/error:"
    st.toast(f"{what} {job.job_id} {state}.", icon=icon)


def download(where, label: str, data, **kw) -> bool:
    """``where.download_button`` that does not rerun the page. A rerun on the click registers the
    button's deferred data again and revokes the old id, so under load a click whose request
    still held that id got no file (Streamlit's ``MediaFileManager.remove_deferred``)."""
    return where.download_button(label, data, on_click="ignore", **kw)


def sidebar_progress(run_dir: str) -> None:
    """The current run's progress line in the sidebar: live (every 2 s) while the run goes on."""
    job = jobs.job_for(run_dir)
    try:
        first = progress.job_progress(job)
    except MemvizError:
        st.caption("starting")
        return

    @st.fragment(run_every=None if first.final else 2.0)
    def line():
        try:
            now = progress.job_progress(job)
        except MemvizError:
            st.caption("starting")
            return
        st.caption(esc(now.readout()))
        if now.final and not first.final:
            finish_notice(job, now.status.state)

    line()


def current_run_dir() -> str | None:
    return st.session_state.get(CURRENT) or None


def current_view(stop_message: bool = True) -> runs.RunView | None:
    """The current run, opened (cached); None with an info box when there is none or it has no check yet."""
    run_dir = current_run_dir()
    if run_dir is None:
        if stop_message:
            st.info("No warm-up run selected. Start one on the **Warm-up** page or pick a saved run in the sidebar.")
        return None
    try:
        return run_view(run_dir, runs.run_token(run_dir))
    except MemvizError as exc:
        if stop_message:
            try:
                live = jobs.job_status(jobs.job_for(run_dir))
            except MemvizError:
                live = None
            if live is not None and not live.final and not live.checks:
                st.info(f"This run has no finished check yet ({esc(live.readout())}). The page fills in by itself "
                        "when the first check is in.")
            else:
                st.info(f"This run cannot be shown: {esc(exc)}")
        return None


def live_banner() -> None:
    """On an analysis page, while the current run goes on: one line saying so (its progress and
    the time of its last event), refreshed every 3 s; the whole page reruns when a new check is
    in or the run ends, so its figures follow the run."""
    run_dir = current_run_dir()
    if not run_dir:
        return
    try:
        first = jobs.job_status(jobs.job_for(run_dir))
    except MemvizError:
        return
    if first.final:
        return
    seen = len(first.checks)

    @st.fragment(run_every=3.0)
    def banner():
        try:
            now = jobs.job_status(jobs.job_for(run_dir))
        except MemvizError:
            return
        if now.final or len(now.checks) != seen:
            run_list.clear()
            st.rerun(scope="app")
        st.info(esc(now.banner()), icon=":material/autorenew:")

    banner()


# ------------------------------------------------------------------------ rendering
#: a short toolbar (zoom, pan, reset, download), upright in the figure's right margin (viz.style)
PLOT_CONFIG = {"displaylogo": False, "modeBarButtonsToRemove": ["select2d", "lasso2d", "autoScale2d",
                                                               "toggleSpikelines", "hoverClosestCartesian",
                                                               "hoverCompareCartesian"]}


@st.cache_resource(show_spinner=False, max_entries=256)
def cached_figure(name: str, inputs: tuple, _build):
    """The figure ``_build()`` makes, built once per ``name`` and ``inputs`` (everything it is drawn from: the run
    and its token, p, k, T, a column...) and shared by every session: a slider moved back finds its figures, and a
    figure whose inputs did not move (the early identification curve when T moves) is the same figure, sent
    unchanged."""
    return _build()


def show(fig, key: str | None = None) -> None:
    """A plotly figure with its one-sentence reading guide under it."""
    from memviz import viz

    st.plotly_chart(fig, width="stretch", key=key, config=PLOT_CONFIG)
    text = viz.caption(fig)
    if text:
        st.caption(text)


def error(exc: Exception | str) -> None:
    """An error box with the (escaped, one-line) message."""
    st.error(esc(exc), icon=":material/error:")


def warning(text) -> None:
    """A warning box with user text in it (escaped)."""
    st.warning(esc(text), icon=":material/warning:")


TONE_ICONS = {"good": ":material/check_circle:", "bad": ":material/report:", "warn": ":material/help:",
              "neutral": ":material/info:"}


def verdict_card(verdict, key: str = "verdict") -> None:
    """The verdict card (:class:`memviz.app.compare_card.Verdict`): its title, then one line per topic."""
    with st.container(border=True, key=key):
        st.markdown(f"#### {esc(verdict.title)}")
        for ln in verdict.lines:
            st.markdown(f"{TONE_ICONS.get(ln.tone, TONE_ICONS['neutral'])} **{esc(ln.topic)}:** {esc(ln.text)}")


def glossary_box() -> None:
    """The glossary, one click away on every page (the sidebar's expander)."""
    with st.expander("What the words mean", icon=":material/menu_book:"):
        for term, text in glossary.entries():
            st.markdown(f"**{esc(term)}**: {esc(text)}")




# --- floor pages
# Cached on the run's path and token: a finished run is measured once for every session.
@st.cache_resource(show_spinner=False, max_entries=12)
def row_null(run_dir: str, token: int):
    return readings.run_row_null(run_view(run_dir, token))


@st.cache_resource(show_spinner="Measuring how close the copies really are…", max_entries=24)
def leak_ranking(run_dir: str, token: int, by: str, n: int):
    return readings.leak_ranking(run_view(run_dir, token), by, n, row_null(run_dir, token))


@st.cache_resource(show_spinner=False, max_entries=12)
def check_closeness(run_dir: str, token: int):
    return readings.check_closeness(run_view(run_dir, token))


@st.cache_resource(show_spinner="Measuring with the other distance…", max_entries=12)
def other_distance(run_dir: str, token: int, distance: str, _candidates=()):
    view = run_view(run_dir, token)
    return readings.measure_distance(view, distance, readings.run_holdout(view, _candidates))


@st.cache_resource(show_spinner="Testing the findings against a null with no dynamics (once per run)…",
                   max_entries=12)
def null_comparison(run_dir: str, token: int):
    out = readings.null_comparison(run_view(run_dir, token))
    null_done().add((run_dir, token))
    return out


@st.cache_resource(show_spinner=False)
def null_done() -> set:
    """(run_dir, token) of the null comparisons already computed (shown without asking again)."""
    return set()


def user_text(value) -> None:
    """Show user-supplied text (a column name, a category) as plain text, never as Markdown."""
    st.text(str(value))
