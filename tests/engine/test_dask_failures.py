"""Dask fails fast and in one line (issue 41, item 2).

At e9efb32: a scheduler address at a port that accepts TCP and never answers held ``memviz memorize
--backend dask`` for good (over 900 s, despite the client's 10 s timeout: dask bounds the connection,
not its handshake); a port answering HTTP text gave the traceback "Unable to allocate 3.07 EiB";
``garbage``, an empty address and ``foo://127.0.0.1:1`` gave tracebacks; the only worker killed mid-run
gave a FutureCancelledError traceback.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("distributed")

from distributed import Client, LocalCluster  # noqa: E402

import memviz.engine.distributed as dist  # noqa: E402
from memviz.engine.neighbors import NeighborEngine  # noqa: E402
from memviz.errors import MemvizError  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


class Server:
    """A local TCP port that accepts and then says nothing (``reply=None``) or sends ``reply``."""

    def __init__(self, reply: bytes | None = None):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port, self.reply, self.conns = self.sock.getsockname()[1], reply, []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(c)
            if self.reply is not None:
                try:
                    c.sendall(self.reply)
                except OSError:
                    pass

    def close(self):
        for c in self.conns:
            c.close()
        self.sock.close()


@pytest.fixture
def files(tmp_path, sample):
    train, _ = sample
    train.data.iloc[:60].to_csv(tmp_path / "t.csv", index=False)
    return tmp_path


def memorize(files, scheduler: str, timeout: float = 120):
    """(exit code, stderr lines, seconds) of ``memviz memorize --backend dask --scheduler ADDRESS`` in a
    process of its own (bounded: the old code never returned at the silent port)."""
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "memviz", "memorize", "--train", str(files / "t.csv"), "--schema",
                        str(ROOT / "sample_data" / "meta.json"), "--synthetic", str(files / "t.csv"),
                        "--out", str(files / "o.csv"), "--backend", "dask", "--scheduler", scheduler, "--quiet"],
                       capture_output=True, text=True, cwd=ROOT, timeout=timeout)
    return p.returncode, p.stderr.strip().splitlines(), time.monotonic() - t0


@pytest.mark.parametrize("reply", [None, b"HTTP/1.1 400 Bad Request\r\nContent-Length: 11\r\n\r\nBad Request" * 8],
                         ids=["silent", "http"])
def test_a_port_that_is_not_a_scheduler_is_one_line_within_the_stated_timeout(files, reply):
    server = Server(reply)
    try:
        code, err, seconds = memorize(files, f"tcp://127.0.0.1:{server.port}")
    finally:
        server.close()
    assert code == 2 and len(err) == 1, err
    assert err[0].startswith("memviz memorize: error: dask scheduler tcp://127.0.0.1:") and "Traceback" not in err[0]
    assert seconds < dist.CONNECT_TIMEOUT + 30                         # the stated bound, plus the start-up


@pytest.mark.parametrize("address", ["garbage", "", "foo://127.0.0.1:1", "tcp://127.0.0.1:99999", "tcp://:8786",
                                     "tcp://127.0.0.1:port", "tcp://a/b:1"])
def test_a_malformed_address_is_one_line_before_any_work(address):
    with pytest.raises(MemvizError) as e:
        with dist.connect(address):
            pass
    assert "\n" not in str(e.value) and str(e.value).startswith("dask scheduler")


def test_a_malformed_address_on_the_command_line_is_one_line(files):
    for address in ("garbage", ""):
        code, err, _ = memorize(files, address)
        assert code == 2 and len(err) == 1 and "dask scheduler" in err[0], err


def test_compare_refuses_a_malformed_scheduler_at_the_door():
    from memviz.compare.config import CompareConfig

    with pytest.raises(MemvizError, match="unknown scheme 'foo'"):
        CompareConfig(backend="dask", scheduler="foo://127.0.0.1:1").validated()


def _kill_worker(client):
    pid = next(iter(client.run(os.getpid).values()))
    os.kill(pid, signal.SIGKILL)


def test_the_only_worker_killed_mid_run_is_one_line(sample):
    train, test = sample
    engine = NeighborEngine(device="cpu").fit(train)
    with LocalCluster(n_workers=1, processes=True, threads_per_worker=1, dashboard_address=None) as c, \
            dist.connect(c) as client:
        remote = dist.DaskEngine(engine, client, rows_per_task=20)
        killed = []

        def progress(done, total):
            if not killed:
                killed.append(done)
                _kill_worker(client)
        with pytest.raises(MemvizError) as e:
            remote.kneighbors(pd.concat([test.data] * 3, ignore_index=True), k=2, progress=progress)
    assert killed and "\n" not in str(e.value) and "lost" in str(e.value)


def test_a_cluster_without_workers_is_one_line_within_the_stated_timeout(sample, monkeypatch):
    train, _ = sample
    monkeypatch.setattr(dist, "NO_WORKER_TIMEOUT", 1.0)
    with LocalCluster(n_workers=0, processes=False, dashboard_address=None) as c, Client(c) as client:
        with pytest.raises(MemvizError, match="is a worker connected"):
            dist.DaskEngine(NeighborEngine(device="cpu").fit(train.subset(train.row_ids[:50])), client)
        fut = client.submit(sum, [1, 2], key="memviz-test-waits")
        with pytest.raises(MemvizError, match="no worker in the cluster"):
            list(dist.results(client, [fut]))
