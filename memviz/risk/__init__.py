"""Why these rows: per-row risk factors from the training table alone (:mod:`.factors`), and a model of a
warm-up's memorization from them with per-feature and per-row attributions (:mod:`.explanation`)."""
