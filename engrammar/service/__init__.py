"""The HTTP service: ``create_app(client, keys=Keys(client.db))`` is a FastAPI app of the
library's calls under ``/v1``, with API keys per tenant (``engram serve`` runs it on
uvicorn). The dependencies ``principal`` and ``requires(scope)`` give any route (the
inspector's too) the caller's :class:`Principal`."""

from engrammar.service._app import create_app, openapi
from engrammar.service._auth import Admin, Reader, Writer, principal, requires
from engrammar.service._keys import KeyInfo, Keys, Principal
from engrammar.service._problems import Problem, Refused

__all__ = ["Admin", "KeyInfo", "Keys", "Principal", "Problem", "Reader", "Refused",
           "Writer", "create_app", "openapi", "principal", "requires"]
