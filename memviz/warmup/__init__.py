"""Warm-up: train TabDDPM and measure every few epochs (run), the tracking callbacks (tracking)
and the run folder (store)."""
