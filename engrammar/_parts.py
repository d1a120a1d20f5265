"""What every group of the client's calls works with: the parts a :class:`Client` wires
once (the calls themselves live in ``client``, ``_chats``, ``_data`` and ``_inspection``)."""

from __future__ import annotations

from engrammar import store
from engrammar.extract._extractor import Extractor
from engrammar.extract._summarizer import Summarizer
from engrammar.models import Scope
from engrammar.nightly._blocks import Blocks
from engrammar.recall._assembler import Assembler
from engrammar.recall._copies import Snapshots
from engrammar.recall._logsearch import LogCopies
from engrammar.recall._window import Window
from engrammar.runtime._database import Database
from engrammar.runtime._embedder import Embedder
from engrammar.runtime._llm import LLM
from engrammar.runtime._tokens import TokenCounter
from engrammar.settings import Settings
from engrammar.write._writer import Writer

# The longest page of the log, or of any listing, one call returns.
MAX_PAGE = 10_000


class Parts:
    """The client's parts, as its calls see them (set by ``Client.__init__``)."""

    db: Database
    settings: Settings
    embedder: Embedder
    llm: LLM | None
    counter: TokenCounter
    extractor: Extractor
    summarizer: Summarizer
    snapshots: Snapshots
    window: Window
    blocks: Blocks
    writer: Writer
    logs: LogCopies
    assembler: Assembler

    def _scopes(self, conn: store.Conn, scope: Scope) -> list[Scope]:
        """The scopes the chat reads: its own, and its user's when some types are user-wide
        and the chat is not private."""
        shares = bool(self.settings.scopes.user_wide) and not store.chat_private(conn, scope)
        return list(store.scopes_of(scope, shares))
