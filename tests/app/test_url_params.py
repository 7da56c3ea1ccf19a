"""A hostile ``?run=`` in the URL is ignored on every page (issue 41, item 6).

At e9efb32 ``?run=%00`` showed a ValueError box ("embedded null byte") on every page: the kept table's
lookup joined the parameter to the runs root and stat-ed it, before the one safe lookup
(:func:`memviz.jobs.status.run_dir_named`) ever saw it.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from memviz.jobs import control as jobs

ROOT = Path(__file__).resolve().parents[2]
PAGES = ["screens/1_data.py", "screens/2_warmup.py", "screens/3_memorization.py", "screens/4_dynamics.py",
         "screens/5_tune.py", "screens/6_compare.py", "screens/7_report.py", "screens/8_audit.py"]


@pytest.mark.parametrize("value", ["\x00", "a\x00b", "../\x00", "%00"])
def test_a_run_parameter_with_a_nul_is_ignored_on_every_page(value, tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest  # lazy: streamlit is optional (memviz[app])

    monkeypatch.setenv(jobs.RUNS_ENV, str(tmp_path))
    for page in PAGES:
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
        at.query_params["run"] = value
        at.run()
        if page != PAGES[0]:
            at.switch_page(page).run()
        assert not at.exception, (page, [e.value for e in at.exception])
