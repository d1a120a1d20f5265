"""Print the service's OpenAPI document (what `engram serve` publishes at /openapi.json),
from the app itself: the source the TypeScript types are generated from.

    .venv/bin/python clients/typescript/scripts/openapi.py > clients/typescript/openapi.json

`make typescript-types` runs it and openapi-typescript; tests/test_typescript.py fails when
either checked-in file differs from what they make now."""

from __future__ import annotations

import json
import sys

from engrammar import Client
from engrammar.service import Keys, create_app


def main() -> None:
    with Client.open(check_embedder=False) as client:
        document = create_app(client, keys=Keys(client.db)).openapi()
    json.dump(document, sys.stdout, indent=2, ensure_ascii=False, sort_keys=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
