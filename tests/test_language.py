"""The offline path's language screen: messages it cannot read are skipped and reported,
English is never taken for another language (every turn of the eval fixtures), and the LLM
path reads everything."""

from __future__ import annotations

from datetime import timedelta

import pytest

from engrammar import Client
from engrammar.evals._fixtures import load_all
from engrammar.extract._language import language
from engrammar.nightly._extract import ExtractionJob
from tests.conftest import T0

OTHER = {
    "es": "Me llamo Ana y vivo en Sevilla con mi hermana pequeña.",
    "fr": "Je suis allergique aux arachides, fais attention s'il te plaît.",
    "de": "Ich wohne seit drei Jahren in Berlin und arbeite als Lehrerin.",
    "pt": "Eu moro em Lisboa e trabalho numa padaria perto do rio.",
    "it": "Mi chiamo Marco e lavoro come cuoco in un ristorante a Roma.",
    "nl": "Ik woon in Utrecht en ik fiets elke dag naar mijn werk.",
    "ru": "Меня зовут Ольга, я живу в Москве и работаю врачом.",
    "zh": "我叫李明，我住在北京，我喜欢吃饺子。",
    "ja": "私の名前は田中です。東京に住んでいて、猫を二匹飼っています。",
    "pl": "Mieszkam w Krakowie i pracuję jako programista od pięciu lat.",
    "tr": "Benim adım Ayşe, İstanbul'da yaşıyorum ve öğretmenim.",
    "sv": "Jag bor i Göteborg och jobbar som sjuksköterska på sjukhuset.",
}


def test_no_turn_of_the_english_fixtures_is_taken_for_another_language() -> None:
    turns = [t.text for f in load_all() for t in f.conversation]
    assert len(turns) > 200
    flagged = {t: language(t) for t in turns if language(t) is not None}
    assert flagged == {}


@pytest.mark.parametrize("code", sorted(OTHER))
def test_each_other_language_is_found(code: str) -> None:
    assert language(OTHER[code]) == code


def test_the_extract_job_skips_and_reports_what_it_cannot_read(client: Client) -> None:
    client.record("ana", "c1", "user", OTHER["es"], at=T0)
    client.record("ana", "c1", "user", "I work as a nurse.", at=T0 + timedelta(minutes=1))
    client.record("ana", "c1", "user", OTHER["fr"], at=T0 + timedelta(minutes=2))
    report = client.extract("ana", "c1", now=T0 + timedelta(hours=1))
    assert report.messages == 3  # all read past: the watermark does not stop at them
    assert report.to_json()["unreadable"] == [
        {"chat": "ana/c1", "user_id": "ana", "chat_id": "c1", "messages": 2,
         "languages": {"es": 1, "fr": 1}}]
    assert [m.content for m in client.memories("ana", "c1")] == ["Works as a nurse"]
    again = client.extract("ana", "c1", now=T0 + timedelta(hours=2))
    assert again.messages == 0 and "unreadable" not in again.to_json()


def test_without_the_screen_every_message_reaches_the_extractor(client: Client) -> None:
    client.record("ana", "c1", "user", OTHER["es"], at=T0)
    seen: list[str] = []

    class Recording:
        """An extractor that reads any language (as a model does) and proposes nothing."""

        name = "recording"

        def extract(self, scope, messages, memories, now):  # type: ignore[no-untyped-def]
            seen.extend(m.content for m in messages)
            return client.extractor.extract(scope, [], memories, now)

    job = ExtractionJob(client.db, Recording(), client.writer)  # type: ignore[arg-type]
    report = job.run(T0 + timedelta(hours=1))
    assert seen == [OTHER["es"]] and "unreadable" not in report.to_json()
