"""The client's calls on a user's data as a whole: delete one memory for good, erase,
export and import."""

from __future__ import annotations

from typing import Any

import psycopg

from engrammar import _inputs as inputs
from engrammar import _userdata as userdata
from engrammar import store
from engrammar._inputs import utcnow
from engrammar._parts import Parts
from engrammar.errors import InvalidInput, NotFound
from engrammar.write._writer import ApplyResult


class DataCalls(Parts):
    def delete(self, user_id: str, chat_id: str, memory_id: int, *, sources: bool = False
               ) -> dict[str, int]:
        """Delete one memory for good (``forget`` archives and keeps the text): the memory,
        its vector, events and links, and every prompt or model call in the audit that
        quotes it. ``sources=True``: also the messages it rests on, the summaries and block
        summaries drawn from them, and the audit rows quoting those (store._deletion).
        A memory of the user's scope is found through any chat that shares it. Rows
        changed, by table."""
        scope = inputs.scope(user_id, chat_id)
        inputs.count(memory_id, "memory id")
        if not isinstance(sources, bool):
            raise InvalidInput(f"sources must be true or false, not {sources!r}")
        with self.db.connection() as conn, conn.transaction():
            store.lock_chat(conn, scope)
            for where in self._scopes(conn, scope):
                if store.is_user_scope(where):
                    store.lock_user_scope(conn, scope.user_id)
                found = store.memory_texts(conn, where, memory_id)
                if found is not None:
                    break
            else:
                raise NotFound("memory", memory_id, f"chat {scope}")
            content, message_ids, extra = found
            counts = store.delete_memory(conn, where, memory_id, content)
            texts = [content, *extra]
            if sources and message_ids:
                deleted, said = store.delete_messages(conn, scope.user_id, message_ids)
                counts.update(deleted)
                texts += said
            counts.update(store.scrub_audit(conn, scope.user_id, texts))
        self.logs.forget(scope.user_id)  # this process's log copies; others see the stamp
        return {table: n for table, n in counts.items() if n}

    def erase_user(self, user_id: str) -> int:
        """Delete every row of the user in every table (the job reports' entries on their
        chats included) and this process's copies of their chats; rows deleted."""
        return self._erase(inputs.user(user_id), None)

    def erase_chat(self, user_id: str, chat_id: str) -> int:
        """Delete every row of one chat, as :meth:`erase_user` does for a user."""
        scope = inputs.scope(user_id, chat_id)
        return self._erase(scope.user_id, scope.chat_id)

    def _erase(self, user_id: str, chat_id: str | None) -> int:
        with self.db.connection() as conn, conn.transaction():
            deleted = store.erase_user(conn, user_id, chat_id)
        self.snapshots.forget(user_id, chat_id)
        self.logs.forget(user_id, chat_id)
        return sum(deleted.values())

    def export_user(self, user_id: str) -> list[dict[str, Any]]:
        """The user's data as export records (_userdata): a header, then every row of
        theirs in every table, read in one snapshot."""
        user_id = inputs.user(user_id)
        records = [userdata.header(user_id)]
        with self.db.connection() as conn, conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            records += [{"table": t, "row": r} for t, r in store.export_rows(conn, user_id)]
        return records

    def import_file(self, data: bytes, *, name: str = "input", source: str = "import",
                    dry_run: bool = False, replace: bool = False
                    ) -> dict[str, ApplyResult] | int:
        """Import an export (its rows restored under fresh ids, every reference rewritten
        to match: store._restore; returns how many) or a file of ops (through the gate;
        returns each chat's result), all or nothing: one transaction. An export goes to a
        user with no data in the store, else it is refused; ``replace`` erases the user
        first, in the same transaction, so a restore that fails leaves the user as it
        was."""
        inputs.text(source, "source", 200)
        parsed = userdata.parse(data, name, self.settings)
        if replace and not parsed.is_export:
            raise InvalidInput(f"{name}: --replace restores an export; this is a file of ops")
        with self.db.connection() as conn:
            try:
                with conn.transaction(force_rollback=dry_run):
                    if parsed.is_export:
                        userdata.check_rows(parsed.rows, store.user_tables(conn), name,
                                            self.settings, self.embedder.dim)
                        if replace:
                            store.erase_user(conn, parsed.user_id or "")
                        return store.restore_rows(conn, parsed.user_id or "", parsed.rows)
                    results: dict[str, ApplyResult] = {}
                    for scope in sorted(parsed.ops, key=lambda s: (s.user_id, s.chat_id)):
                        results[str(scope)] = self.writer.apply(
                            conn, scope, parsed.ops[scope], now=utcnow(), source=source)
                    return results
            except KeyError as exc:
                raise InvalidInput(f"{name}: {exc.args[0]}") from None
            except (psycopg.DataError, psycopg.IntegrityError) as exc:
                raise InvalidInput(f"{name}: the store refused it, nothing was imported: "
                                   f"{exc}") from None
            finally:
                if parsed.is_export and not dry_run:
                    self.snapshots.forget(parsed.user_id or "")
                    self.logs.forget(parsed.user_id or "")

