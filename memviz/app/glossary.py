"""The words of the dashboard and the report, explained once for someone who has not read the papers.

Every page links to this glossary (the sidebar's "What the words mean"); the report prints it
at its end. Plain text only: no Markdown, no HTML (the callers escape or show it as it is).
"""
from __future__ import annotations

#: term -> its explanation, in reading order
GLOSSARY: dict[str, str] = {
    "Memorized": (
        "A generated row is flagged as memorized when its nearest training row is more than three times "
        "closer than the second nearest (r = d1 / d2 < 1/3), the papers' test. It measures relative "
        "closeness, not identity: a flagged row is closer to one training row than to all the others, which "
        "says nothing about how close it really is. With the papers' distance the numbers are rescaled for "
        "each generated row, so a flagged row can differ a lot from its training row (an age of 31 against "
        "90 has been seen)."),
    "Copy": (
        "A flagged (memorized) generated row, credited to its nearest training row: \"12 copies of row 7\" "
        "means 12 flagged generated rows whose nearest training row is row 7. A copy in this sense is not "
        "an identical row; the share of generated rows identical to a training row is shown separately "
        "(\"exact copies\")."),
    "Floor": (
        "How often the same test flags real rows the model never saw (the test file or the hold-out), "
        "measured against the same training rows. Real records resemble each other, so the floor is often "
        "20 to 30 %. Only the part of the memorization ratio above the floor comes from the model."),
    "Excess": (
        "Memorization ratio minus the floor, in percentage points, with a 95 % interval. An interval that "
        "contains 0 means the model's rows are not flagged more often than real rows it never saw."),
    "Memorization ratio": (
        "The share of generated rows flagged as memorized (see Memorized)."),
    "Mem-AUC": (
        "A softer memorization ratio: the average of 1 - r over the generated rows, between 0 (no generated "
        "row stands out as close to one training row) and 1 (every generated row sits on one). For one training "
        "row, its Mem-AUC at a check is the sum of 1 - r over the generated rows credited to it, so it grows "
        "with the number of those rows and can exceed 1."),
    "Top group": (
        "The most-copied training rows over the whole warm-up (by default the 10 % with the most copies); "
        "Non-Top is every other training row."),
    "DynamicCut score": (
        "How DynamicCut ranks training rows for pruning: the mean of a row's k largest per-row Mem-AUC values "
        "over the checks up to epoch T. Because a row's Mem-AUC is a sum over the generated rows credited to "
        "it, the score counts close generated rows, not a share: a score of 116 means that at its busiest "
        "checks about 116 generated rows' worth of closeness went to that row, not 116 %."),
    "Pruning": (
        "Removing training rows and training again. It protects the removed rows: the retrained model "
        "rarely reproduces them. It does not, by itself, protect the table: in memviz's study (docs/study.md, "
        "section 4), where TabDDPM copied clearly above the floor, the retrained model copied the kept rows "
        "about as often as the first model copied the whole table, and removing the rows with the highest "
        "early scores did no better than removing as many rows at random. Check a pruned model on the "
        "Compare page: its memorization against the kept rows, beside the same figure for the unpruned "
        "model."),
    "Seeds": (
        "Independent repetitions with different random starts. With fewer than 3 seeds the spread of a result "
        "cannot be estimated, so a difference is only indicative."),
    "Indicative": (
        "A result from fewer than 3 seeds: it shows a direction, not an established effect."),
}


def entries() -> list[tuple[str, str]]:
    """(term, explanation) pairs in reading order."""
    return list(GLOSSARY.items())


def explain(term: str) -> str:
    """The explanation of ``term`` (KeyError names the known terms)."""
    try:
        return GLOSSARY[term]
    except KeyError:
        raise KeyError(f"no glossary entry {term!r} (known: {', '.join(GLOSSARY)})") from None
