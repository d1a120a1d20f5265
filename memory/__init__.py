"""Typed long-term user memory for LLM chat products, on PostgreSQL + pgvector."""

from memory.aio import AsyncClient
from memory.assembler import Compiled, Covered, Part
from memory.block import Block, BlockItem, Dropped
from memory.client import Client
from memory.db import Database
from memory.embed import Embedder, LocalEmbedder, OpenAIEmbedder
from memory.errors import (
    ConfigError,
    DatabaseError,
    Error,
    InvalidInput,
    LLMError,
    MalformedOutput,
    NotFound,
    Refusal,
)
from memory.models import (
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
    Verdict,
)
from memory.settings import Settings
from memory.writer import ApplyResult

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
    "Verdict",
]
