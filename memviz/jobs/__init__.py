"""Jobs: the runtime the CLI and the dashboard share: a JSON spec in, JSON-lines events out
(spec), the FIFO queue of processes (queue), starting, reading and cancelling jobs (control),
and the background worker (``python -m memviz.jobs.worker SPEC``)."""
