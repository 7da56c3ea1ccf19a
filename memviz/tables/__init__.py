"""Load: a table, its schema and its encoding; redaction of what a report shows of it."""
