"""engrammar: typed long-term user memory for LLM chat products, on PostgreSQL + pgvector.

Record each turn, let the nightly jobs extract typed memories through a strict write gate,
and recall a prompt block that never exceeds its budget before the next turn.
"""

from importlib.metadata import PackageNotFoundError as _PackageNotFoundError
from importlib.metadata import version as _version

from engrammar.aio import AsyncClient
from engrammar.client import Client
from engrammar.errors import (
    ConfigError,
    DatabaseError,
    Error,
    InvalidInput,
    LLMError,
    MalformedOutput,
    NotFound,
    Refusal,
)
from engrammar.models import (
    Decision,
    Memory,
    MemoryEvent,
    MemoryType,
    Message,
    Op,
    OpKind,
    Role,
    Scope,
    Status,
    Surface,
    Tense,
    Verdict,
)
from engrammar.recall._block import Block, BlockItem, Dropped, ExcerptReply
from engrammar.recall._layers import Compiled, Covered, Part
from engrammar.runtime._database import Database
from engrammar.runtime._embedder import Embedder, LocalEmbedder, OpenAIEmbedder
from engrammar.settings import Settings
from engrammar.write._writer import ApplyResult

try:
    __version__ = _version("engrammar")
except _PackageNotFoundError:  # a checkout on sys.path, not installed
    __version__ = "0.0.0+unknown"

__all__ = [
    "ApplyResult",
    "AsyncClient",
    "Block",
    "BlockItem",
    "Client",
    "Compiled",
    "ConfigError",
    "Covered",
    "Database",
    "DatabaseError",
    "Decision",
    "Dropped",
    "Embedder",
    "Error",
    "ExcerptReply",
    "InvalidInput",
    "LLMError",
    "LocalEmbedder",
    "MalformedOutput",
    "Memory",
    "MemoryEvent",
    "MemoryType",
    "Message",
    "NotFound",
    "Op",
    "OpKind",
    "OpenAIEmbedder",
    "Part",
    "Refusal",
    "Role",
    "Scope",
    "Settings",
    "Status",
    "Surface",
    "Tense",
    "Verdict",
    "__version__",
]
