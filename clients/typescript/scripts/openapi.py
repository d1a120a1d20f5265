"""Print the service's OpenAPI document (what `engram serve` publishes at /openapi.json),
from the app itself: the source the TypeScript types are generated from.

    .venv/bin/python clients/typescript/scripts/openapi.py > clients/typescript/openapi.json

`make typescript-types` runs it and openapi-typescript; tests/test_typescript.py fails when
either checked-in file differs from what they make now."""

from __future__ import annotations

import json
import sys

from engrammar.service import openapi


def main() -> None:
    # The app's own document, built with no database.
    json.dump(openapi(), sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
