"""The CLI's commands, one module each (as diffusers' ``commands/``): ``register(sub, command)``
adds the command's arguments, ``run(args)`` runs it and prints its JSON line last."""
from memviz.commands import (
    attack,
    audit,
    compare,
    inspect,
    memorize,
    prune,
    report,
    sample,
    study,
    warmup,
)

#: in the order ``memviz --help`` lists them: the pipeline's
COMMANDS = (memorize, warmup, inspect, sample, prune, compare, study, audit, report, attack)
