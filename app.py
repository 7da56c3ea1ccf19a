"""memviz dashboard: `streamlit run app.py`.

The router (st.navigation) and the shared sidebar: the current dataset and the current
warm-up run. Every screen is one file in screens/.
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
if str(ROOT) not in sys.path:  # screens import screens._ui and memviz from the repository
    sys.path.insert(0, str(ROOT))

import streamlit as st  # noqa: E402

from memviz.jobs import control as jobs  # noqa: E402
from screens import _ui  # noqa: E402

# an emoji favicon is drawn in the browser; a ":material/..." one is fetched from fonts.gstatic.com
st.set_page_config(page_title="memviz: which rows does the model copy?", page_icon="🔎", layout="wide")

def sidebar() -> None:
    state = st.session_state
    runs = _ui.run_list(_ui.root())
    options = [""] + runs["path"].tolist()
    # the current run lives in a plain session key (widget state is dropped on page changes);
    # a run chosen on a page (new warm-up, reopen) or in the URL wins over the old pick
    pending = state.pop(_ui.PENDING_RUN, None)
    if pending is not None:
        state[_ui.CURRENT] = pending
    elif _ui.CURRENT not in state:
        wanted = jobs.run_dir_named(st.query_params.get("run"), _ui.root())  # a run folder under the root
        match = [str(wanted)] if wanted is not None else []
        finished = runs[runs["status"] == "finished"]["path"].tolist()
        state[_ui.CURRENT] = match[0] if match else (finished[0] if finished else "")
    current = state[_ui.CURRENT]
    if current and current not in options:
        if Path(current).exists() or jobs.job_for(current).job_dir.exists():
            options.append(current)  # a run that has just started
        else:
            current = state[_ui.CURRENT] = ""
    # one table per session: the current run's (a new tab on a run of another table switches to it)
    data = _ui.ensure_data(current or None)
    train = data["train"]
    with st.sidebar:
        st.markdown("**Dataset**")
        st.caption(f"{_ui.esc(data['label'])}  \n{len(train):,} training rows · "
                   f"{len(data['test']) if data['test'] is not None else 0:,} test rows · "
                   f"target: {_ui.esc(train.schema.target or 'none')}"
                   + (f" · row key: {_ui.esc(' + '.join(train.schema.key_columns))}" if train.schema.key else ""))
        if state.get(_ui.SWITCHED):
            st.info(state.pop(_ui.SWITCHED))   # its names went through _ui.esc (st.info renders Markdown)
        labels = _ui.run_labels(runs)
        state[_ui.RUN] = current

        def picked():
            if state[_ui.RUN] in options:  # never a stale label (see _ui.run_labels)
                state[_ui.CURRENT] = state[_ui.RUN]

        st.selectbox("Warm-up run", options, key=_ui.RUN, on_change=picked,
                     format_func=lambda p: _ui.run_label(labels, p),
                     help="Every page shows this run and the table it was trained on. Runs live under the runs "
                          f"folder ({_ui.root()}); a run keeps going when you close the tab.")
        if current:
            _ui.sidebar_progress(current)
            st.caption(f"run {_ui.esc(Path(current).name)}")
        if current:
            st.query_params["run"] = Path(current).name
        elif "run" in st.query_params:
            del st.query_params["run"]
        if data.get("key"):  # a reload finds the table again (kept with the runs)
            st.query_params[_ui.TABLE_PARAM] = data["key"]
        elif _ui.TABLE_PARAM in st.query_params:
            del st.query_params[_ui.TABLE_PARAM]
        _ui.glossary_box()


_ui.demo_installed(_ui.root())     # a first start shows a finished run of the bundled sample (memviz.app.demo)
sidebar()
page = st.navigation(_ui.pages())
if page.url_path in _ui.ANALYSIS_PAGES:
    _ui.live_banner()
page.run()
