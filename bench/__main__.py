"""Run every benchmark, or the ones named: `python -m bench embed recall`."""

from __future__ import annotations

import importlib
import sys

ALL = ["server", "embed", "gate", "recall", "lifecycle", "compile"]


def main(argv: list[str]) -> None:
    for name in argv or ALL:
        module = importlib.import_module(f"bench.{name}")
        print(f"== {name}")
        module.main()


if __name__ == "__main__":
    main(sys.argv[1:])
