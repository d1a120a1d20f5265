"""The ``engram`` command: parses, calls the library, prints. ``--json`` for scripts.

``root`` holds the root group; ``app`` what every command shares; ``database``, ``data``,
``turn`` and ``jobs`` one noun's commands each.
"""

from engrammar.cli._root import cli, main

__all__ = ["cli", "main"]
