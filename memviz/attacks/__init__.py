"""Targeted shadow-model attacks: how exposed chosen training rows are to an attacker who can train the
generator himself (Stadler et al. 2022; Meeus et al. 2023; LiRA's online design, Carlini et al. 2022).

``design`` (the settings, the targets and which shadow holds which target), ``features`` (what the
attacker reads in a generated table near a target), ``lira`` (the per-target likelihood-ratio test
and its figures), ``store`` (the attack folder: one committed folder per finished shadow, resumable),
``shadow`` (training the shadows: :func:`~memviz.attacks.shadow.targeted_attack`).
"""
