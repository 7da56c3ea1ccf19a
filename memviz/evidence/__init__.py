"""Evidence: the privacy tests beyond the ratio test, each read against the hold-out: the
membership attack, the data-copying test, attribute inference (suite: all three in one call),
and the rank statistics they share (ranktests)."""
