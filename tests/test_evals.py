"""The eval runner: the fixture schema, the metrics, and fixtures end to end on a real
database (the test database, not the eval one)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from engrammar import Client, Database, LocalEmbedder, Settings
from engrammar.evals._cli import cli_main
from engrammar.evals._fixtures import FIXTURES_DIR, Fixture, FixtureError, load_all, load_file
from engrammar.evals._matching import has_keyword
from engrammar.evals._metrics import (
    THRESHOLDS,
    Counts,
    below_thresholds,
    hit_at_k,
    precision,
    recall,
)
from engrammar.evals._report import write
from engrammar.evals._runner import Runner, RunReport, run_fixtures
from engrammar.settings import GateSettings

GOOD: dict[str, Any] = {
    "name": "tiny",
    "description": "A name is extracted and recalled.",
    "conversation": [{"day": 0, "text": "My name is Dana."}],
    "expect": {
        "extracted": [{"type": "profile", "keywords": ["Dana"]}],
        "recall": [{"query": "What's my name?", "top": [{"keywords": ["Dana"]}]}],
    },
}


def dump(tmp_path: Path, data: dict[str, Any], name: str = "tiny") -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


# -- the schema ------------------------------------------------------------------------------

def test_a_good_fixture_loads(tmp_path: Path) -> None:
    fixture = load_file(dump(tmp_path, GOOD))
    assert fixture.name == "tiny" and fixture.chats() == ["main"]
    assert fixture.expect.extracted[0].keywords == ["Dana"]


def with_change(path: str, value: Any) -> dict[str, Any]:
    data: Any = json.loads(json.dumps(GOOD))
    *head, last = path.split(".")
    node = data
    for key in head:
        node = node[int(key)] if key.isdigit() else node[key]
    if value is None:
        del node[last]
    elif last.isdigit():
        node[int(last)] = value
    else:
        node[last] = value
    return dict(data)


@pytest.mark.parametrize(("path", "value", "says"), [
    ("expect", None, "expect"),                                       # required
    ("conversation", [], "conversation"),                            # at least one turn
    ("expect.extracted.0", {"type": "profile"}, "keywords or similar_to"),
    ("expect.extracted.0", {"type": "trait", "keywords": ["x"]}, "type"),
    ("expect.extracted.0", {"keywords": ["x"], "colour": "red"}, "colour"),  # no extras
    ("expect.recall.0", {"query": "q", "chat": "elsewhere"}, "elsewhere"),
    ("conversation", [{"day": 2, "text": "a"}, {"day": 1, "text": "b"}], "time order"),
    ("conversation", [{"role": "assistant", "text": "hi"}], "user turn"),
    ("expect.extracted.0", {"keywords": ["x"], "op": "forget"}, "op must be"),
    ("expect.extracted.0", {"keywords": ["a|"]}, "empty keyword"),
])
def test_the_schema_rejects_a_malformed_fixture(tmp_path: Path, path: str, value: Any,
                                                says: str) -> None:
    with pytest.raises(FixtureError, match=says):
        load_file(dump(tmp_path, with_change(path, value)))


def test_a_file_that_is_no_fixture_is_rejected(tmp_path: Path) -> None:
    bad = tmp_path / "broken.yaml"
    bad.write_text("- just\n- a list\n", encoding="utf-8")
    with pytest.raises(FixtureError, match="mapping"):
        load_file(bad)
    with pytest.raises(FixtureError, match="differs from the file name"):
        load_file(dump(tmp_path, GOOD, name="other"))
    with pytest.raises(FixtureError, match="unknown fixture nope"):
        load_all(tmp_path, ["nope"])


def test_the_shipped_fixtures_cover_the_failure_modes() -> None:
    fixtures = load_all(FIXTURES_DIR)
    assert len(fixtures) >= 20
    covered = {c for f in fixtures for c in f.covers}
    assert {"reinforce", "boundary", "correction", "forget", "suppression", "open_loop",
            "resolution", "decay", "follow_up", "over_reference", "isolation", "paraphrase",
            "ephemeral", "contradiction", "pinned", "prompt_injection"} <= covered
    assert all(isinstance(f, Fixture) for f in fixtures)


# -- metrics ---------------------------------------------------------------------------------

def test_metrics() -> None:
    assert precision(19, 20) == 0.95 and recall(3, 4) == 0.75
    assert precision(0, 0) == 1.0  # nothing extracted, nothing wrong
    assert hit_at_k([5, 4, 3, 2], [2]) is False
    assert hit_at_k([5, 4, 3, 2], [9, 3]) is True
    assert hit_at_k([], [1]) is False
    total = Counts(extracted=10, matched=9, expected=5, found=5, queries=4, hits=3) + Counts(
        extracted=10, matched=10, queries=1, hits=1, duplicate_leaks=1)
    assert (total.precision, total.recall, total.hit_at_3) == (0.95, 1.0, 0.8)
    assert total.duplicate_leaks == 1


def test_a_keyword_matches_at_the_start_of_a_word() -> None:
    # The schema says a keyword occurs in the content: a stem matches its forms, but
    # never from inside another word.
    assert has_keyword("Retired from Royal Mail in May", "retire")
    assert has_keyword("Their husband is a firefighter", "fire service|firefight")
    assert has_keyword("Likes GREEN tea", "green tea")
    assert not has_keyword("Steams the milk", "tea")
    assert not has_keyword("Bought a velvet sofa", "vet")


def test_thresholds_are_checked_in_one_place() -> None:
    ok = {"precision": 0.95, "recall": 0.85, "hit_at_3": 1.0, "failed_fixtures": 0,
          "duplicate_leaks": 0, "isolation_leaks": 0}
    assert below_thresholds(ok) == []
    bad = {**ok, "precision": 0.94, "recall": 0.8, "isolation_leaks": 1}
    assert below_thresholds(bad) == ["precision 0.940 < 0.95", "recall 0.800 < 0.85",
                                     "isolation_leaks 1 > 0"]
    assert set(THRESHOLDS) == set(ok)


def test_an_unknown_fixture_is_a_usage_error() -> None:
    assert cli_main(["--fixture", "no_such_fixture"]) == 2


# -- end to end ------------------------------------------------------------------------------

def test_fixtures_pass_end_to_end(client: Client, tmp_path: Path) -> None:
    fixtures = load_all(FIXTURES_DIR, ["correction_is_update", "explicit_forget"])
    lines: list[str] = []
    report = run_fixtures(client, fixtures, log=lines.append)
    assert [r.failures for r in report.results] == [[], []]
    assert report.ok and report.totals.extracted == 2 and report.totals.hits >= 2
    assert any("same_slot" in line for line in lines)  # the gate decisions are shown
    assert any("<memory>" in line for line in lines)   # and the blocks
    paths = write(report, tmp_path)
    data = json.loads(paths["json"].read_text())
    for key in ("fixtures", "passed", "precision", "recall", "hit_at_3", "duplicate_leaks",
                "isolation_leaks", "per_fixture", "extractor"):
        assert key in data
    assert data["extractor"] == "parser" and data["passed"] == 2
    assert "correction_is_update" in paths["markdown"].read_text()
    # Each fixture's scopes are erased when it ends.
    with client.db.connection() as conn:
        assert conn.execute("SELECT count(*) FROM memories").fetchone() == (0,)


def test_a_wrong_expectation_fails_with_its_reason(client: Client, tmp_path: Path) -> None:
    data = with_change("expect.extracted.0", {"type": "profile", "keywords": ["Dana"],
                                              "op": "update"})
    result = Runner(client).run(load_file(dump(tmp_path, data)))
    assert not result.passed and len(result.failures) == 1
    assert result.failures[0].startswith("profile[Dana]@main: memory ")
    assert result.failures[0].endswith("'Name is Dana': created by add, not update")


def test_a_block_check_on_a_memory_that_must_not_exist_holds_by_its_absence(
        client: Client, tmp_path: Path) -> None:
    data = {**GOOD, "conversation": [
        {"day": 0, "text": "My name is Dana."},
        {"day": 0, "text": "If I won the lottery I'd buy a vineyard in Tuscany."}]}
    data["expect"] = {**GOOD["expect"], "absent": [{"keywords": ["vineyard"]}],
                      "never_in_block": [{"keywords": ["vineyard"]}]}
    data["expect"]["recall"] = [{"query": "What's my name?", "top": [{"keywords": ["Dana"]}],
                                 "absent": [{"keywords": ["vineyard"]}]}]
    assert Runner(client).run(load_file(dump(tmp_path, data))).failures == []
    # Without the fixture saying it must not exist, a word of the conversation that was
    # never stored is out of the block by its absence.
    del data["expect"]["absent"]
    assert Runner(client).run(load_file(dump(tmp_path, data))).failures == []
    # A keyword said nowhere in the conversation matches nothing and checks nothing: it is
    # likely wrong.
    data["expect"]["never_in_block"] = [{"keywords": ["vinyard"]}]
    data["expect"]["recall"][0]["absent"] = [{"keywords": ["vinyard"]}]
    failures = Runner(client).run(load_file(dump(tmp_path, data))).failures
    assert [f.split(":")[-2].strip() for f in failures] == [
        "absent check matches no stored memory", "never_in_block matches no stored memory"]


def test_a_gate_that_lets_duplicates_through_leaks(clean: Database,
                                                   embedder: LocalEmbedder) -> None:
    no_dedup = GateSettings(lexical_duplicate=101, paraphrase_duplicate=1.1,
                            paraphrase_floor=1.1)
    leaky = Client(clean, settings=Settings(gate=no_dedup), embedder=embedder)
    report: RunReport = run_fixtures(leaky, load_all(FIXTURES_DIR, ["paraphrase_dedup"]))
    (result,) = report.results
    assert result.counts.duplicate_leaks > 0 and not report.ok
    assert any(f.startswith("duplicate leak") for f in result.failures)
