"""Run every benchmark, or the ones named: `python -m bench embed recall`.

Options after a name go to that benchmark: `python -m bench locomo --mode observations`
(one benchmark at a time, and only one whose ``main`` takes an argument list)."""

from __future__ import annotations

import importlib
import inspect
import sys

ALL = ["server", "embed", "gate", "chat_size", "extract", "recall", "lifecycle", "compile",
       "record", "recall_filter", "caches", "turn_cost", "blocks", "locomo", "log_recall", "aio",
       "tokens", "http", "ui", "restore", "labels", "changes"]


def main(argv: list[str]) -> None:
    split = next((i for i, a in enumerate(argv) if a.startswith("-")), len(argv))
    names, options = argv[:split], argv[split:]
    if options and len(names) != 1:
        raise SystemExit("usage: python -m bench [NAME ...] | python -m bench NAME --option ...")
    for name in names or ALL:
        module = importlib.import_module(f"bench.{name}")
        print(f"== {name}")
        if options:
            if not inspect.signature(module.main).parameters:
                raise SystemExit(f"bench {name} takes no options (given: {' '.join(options)})")
            module.main(options)
        else:
            module.main()


if __name__ == "__main__":
    main(sys.argv[1:])
