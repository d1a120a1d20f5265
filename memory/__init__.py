"""Typed long-term user memory for LLM chat products, on PostgreSQL + pgvector."""

from memory.client import ChatExtraction, Client
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
    Scope,
    Status,
    Surface,
)
from memory.settings import Settings
from memory.writer import ApplyResult

__all__ = [
    "ApplyResult",
    "ChatExtraction",
    "Client",
    "ConfigError",
    "Database",
    "DatabaseError",
    "Decision",
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
    "Refusal",
    "Scope",
    "Settings",
    "Status",
    "Surface",
]
