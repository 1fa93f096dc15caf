"""Sessions of agents nobody wrote rules for, with the truth known by construction.

Every session is one agent of a :mod:`bench.domains.catalog` domain in one language: it
verifies the member the user names, looks the record up, and tells the user what the
record says — date, time, amount, reference and the person in charge — rendered with
``babel``'s conventions for that language (``12. Mai 2026``, ``12 de mayo de 2026``,
``25,00 €``). A *variant* either keeps every stated value true in another wording
(paraphrase, another format, a relative day, a retried call, the person in charge without
a title and in Latin letters, a reminder "in 2 days" that the record holds as a count of
days) or changes exactly one thing (the date by a day, the time by an hour, the amount,
the reference, the member id the agent passes, a relative day, the person in charge), so
the expected verdict is known without reading the session.

Spans are recorded with the real OpenTelemetry SDK through the same recorder as the
bundled samples (:mod:`scripts.generate_sample_traces`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from pathlib import Path
from typing import Any

from anyascii import anyascii
from babel import Locale
from babel.dates import format_date, format_time
from babel.numbers import format_currency

from bench.domains import flows
from bench.domains.catalog import DOMAINS, LANGUAGES, PEOPLE, Domain
from scripts.generate_sample_traces import (
    GENAI_APP_SCOPE,
    GenAIAgent,
    Session,
    ToolCall,
    ToolSpec,
    epoch_ns,
    fixed_resource,
    message,
    schema,
    spaced,
    text_part,
    tool_messages,
    write_lines,
)

CORRECT = (
    "paraphrase",
    "other_format",
    "relative_day",
    "retry",
    "person_other_form",
    "duration",
)
WRONG = (
    "wrong_date",
    "wrong_time",
    "wrong_amount",
    "wrong_reference",
    "wrong_argument",
    "wrong_relative_day",
    "wrong_person",
)
VARIANTS = CORRECT + WRONG

ANSWERS = {
    "en": (
        "Your {noun} {ref} is on {date} at {time} with {person}. The fee is {amount}.",
        "I found it: {noun} {ref}, {date}, {time}. {person} is in charge; the cost is {amount}.",
    ),
    "de": (
        "Ihr {noun} {ref} ist am {date} um {time} Uhr bei {person}. Die Gebühr beträgt {amount}.",
        "Gefunden: {noun} {ref} am {date}, {time} Uhr. Zuständig ist {person}; es kostet {amount}.",
    ),
    "es": (
        "Su {noun} {ref} es el {date} a las {time} con {person}. La tarifa es de {amount}.",
        "Lo encontré: {noun} {ref}, el {date} a las {time}. Le atenderá {person}; "
        "el importe es {amount}.",
    ),
    "ru": (
        "Ваша {noun} {ref} назначена на {date} в {time}, ответственный: {person}. "
        "Стоимость: {amount}.",
        "Нашёл: {noun} {ref}, {date}, {time}. Вас примет {person}; к оплате {amount}.",
    ),
}
# The "duration" variant's extra sentence: a day said as "in N days", which the record
# holds as a count (``reminder_in_days``), not as a day.
REMINDERS = {
    "en": "You will get a reminder in {n} days.",
    "de": "Sie erhalten in {n} Tagen eine Erinnerung.",
    "es": "Recibirá un recordatorio dentro de {n} días.",
    "ru": "Напоминание придёт через {n} дня.",
}
REMINDER_DAYS = 2  # fewer than any record's day is ahead (3 or more), so no day says it
QUESTIONS = {
    "en": "When is my {noun} {ref}? My member id is {member}, born {dob}.",
    "de": "Wann ist mein {noun} {ref}? Meine Mitgliedsnummer ist {member}, geboren am {dob}.",
    "es": "¿Cuándo es mi {noun} {ref}? Mi número de socio es {member}, nacido el {dob}.",
    "ru": "Когда моя {noun} {ref}? Мой номер участника {member}, дата рождения {dob}.",
}


@dataclass(frozen=True)
class Truth:
    """What a session must get: its expected root cause (None: a correct session)."""

    session_id: str
    domain: str
    language: str
    variant: str
    wrong: bool
    # Where the proof sits: the answer, or the call that passed a wrong argument.
    expected_kind: str | None
    expected_name: str | None
    shape: str = "invocation"  # or "conversation_turn": the runner states the turn
    # The flows of :mod:`bench.domains.flows`: answers above the proof that inherit it, the
    # answer that must fail for claiming a failed action done, the answer that is a suspect.
    inherits: int = 0
    answer_fails: bool = False
    answer_suspect: bool = False


def _rng(*parts: object) -> int:
    return int.from_bytes(hashlib.sha256("/".join(map(str, parts)).encode()).digest()[:8], "big")


def _plain(text: str) -> str:
    """Narrow no-break spaces as ordinary ones: what a model writes, mostly."""
    return text.replace("\u202f", " ").replace("\xa0", " ")


def _relative_phrase(language: str, today: date, day: date) -> str:
    """How the language says ``day`` from ``today``: CLDR's own relative-day words."""
    fields = Locale.parse(language)._data["date_fields"]
    offset = (day - today).days
    words = fields["day"]["relative"]
    if offset in words:
        return str(words[offset])
    weekday = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")[day.weekday()]
    return str(fields[weekday]["relative"][1])


def _date_text(language: str, day: date, style: str) -> str:
    if style == "iso":
        return day.isoformat()
    return _plain(format_date(day, style, locale=language))


def _time_text(language: str, moment: time, style: str) -> str:
    if style == "24h" or language != "en":
        return moment.strftime("%H:%M")
    return _plain(format_time(moment, "short", locale=language))


def _transpose(digits: str) -> str:
    """Two neighbouring digits swapped: the commonest typing slip."""
    for i in range(len(digits) - 2, -1, -1):
        if digits[i] != digits[i + 1]:
            return digits[:i] + digits[i + 1] + digits[i] + digits[i + 2 :]
    return digits[:-1] + str((int(digits[-1]) + 1) % 10)


@dataclass(frozen=True)
class Facts:
    """The record of one session, and the day the agent was told it is."""

    today: date
    day: date
    moment: time
    amount: float
    reference: str
    member: str
    dob: date
    person: str
    iso_record: bool  # one ISO ``start`` datetime, else separate date and time fields


def _facts(domain: Domain, language: str, variant: str, n: int) -> Facts:
    seed = _rng(domain.name, language, variant, n)
    # A Thursday or Friday: the coming Monday to Wednesday is then also "next week's",
    # so "next Tuesday" means one day whichever way a reader takes it.
    today = date(2026, 5, 7) + timedelta(days=7 * (seed % 20) + (seed >> 5) % 2)
    if variant == "relative_day":  # tomorrow, the coming Monday or Tuesday
        ahead = (1, 7 - today.weekday(), 8 - today.weekday())[seed % 3]
    elif variant == "wrong_relative_day":  # said one day later: Tuesday or Wednesday
        ahead = (7 - today.weekday(), 8 - today.weekday())[seed % 2]
    else:
        ahead = 3 + seed % 40
    low, high = domain.amount_range
    return Facts(
        today=today,
        day=today + timedelta(days=ahead),
        moment=time(8 + seed % 10, (15 * (seed >> 3)) % 60),
        amount=float(low + (seed >> 7) % max(high - low, 1)) + (0.5 if seed % 4 == 1 else 0.0),
        reference=f"{domain.prefix}-{10000 + (seed >> 11) % 89999}",
        member=f"M-{100000 + (seed >> 17) % 899999}",
        dob=date(1950 + (seed >> 23) % 50, 1 + (seed >> 29) % 12, 1 + (seed >> 33) % 28),
        person=PEOPLE[language][(seed >> 37) % len(PEOPLE[language])],
        iso_record=bool((seed >> 41) % 2),
    )


def _record(domain: Domain, facts: Facts, variant: str) -> dict[str, Any]:
    when: dict[str, Any] = (
        {"start": datetime.combine(facts.day, facts.moment).isoformat()}
        if facts.iso_record
        else {"date": facts.day.isoformat(), "time": facts.moment.strftime("%H:%M")}
    )
    return {
        "reference": facts.reference,
        **when,
        "amount": facts.amount,
        "currency": domain.currency,
        domain.role: facts.person,
        "status": "confirmed",
        **({"reminder_in_days": REMINDER_DAYS} if variant == "duration" else {}),
    }


def _answer(domain: Domain, language: str, variant: str, facts: Facts) -> str:
    """The final answer: every value true but the one the variant changes."""
    day, moment, amount, reference = facts.day, facts.moment, facts.amount, facts.reference
    if variant == "wrong_date":
        day += timedelta(days=1)
    elif variant == "wrong_time":
        moment = time((moment.hour + 1) % 24, moment.minute)
    elif variant == "wrong_amount":
        amount += 5 if amount < 100 else 40
    elif variant == "wrong_reference":
        prefix, digits = reference.split("-")
        reference = f"{prefix}-{_transpose(digits)}"
    style = "medium" if variant == "other_format" else "long"
    date_text = _date_text(language, day, style)
    if variant == "relative_day":
        date_text = f"{_relative_phrase(language, facts.today, day)}, {date_text}"
    elif variant == "wrong_relative_day":
        # The day said relatively only, one day off: nothing else names the date.
        date_text = _relative_phrase(language, facts.today, day + timedelta(days=1))
    template = ANSWERS[language][1 if variant == "paraphrase" else 0]
    person = facts.person
    if variant == "wrong_person":  # another person in charge of the same language
        people = PEOPLE[language]
        person = people[(people.index(person) + 1) % len(people)]
    elif variant == "person_other_form":  # no title, in Latin letters without diacritics
        person = anyascii(" ".join(w for w in person.split() if not w.endswith(".")))
    reminder = f" {REMINDERS[language].format(n=REMINDER_DAYS)}" if variant == "duration" else ""
    return (
        template.format(
            noun=domain.nouns[language],
            ref=reference,
            date=date_text,
            time=_time_text(language, moment, "24h" if variant == "other_format" else "short"),
            person=person,
            amount=_plain(format_currency(amount, domain.currency, locale=language)),
        )
        + reminder
    )


def _tools(domain: Domain) -> tuple[ToolSpec, ...]:
    return (
        ToolSpec(
            "verify_member",
            "Verify a member by id and date of birth.",
            schema({"member_id": {"type": "string"}, "date_of_birth": {"type": "string"}}),
        ),
        ToolSpec(
            domain.tool,
            f"Look up a {domain.nouns['en']} by its reference.",
            schema({"reference": {"type": "string"}}),
        ),
    )


def record_session(domain: Domain, language: str, variant: str, n: int) -> tuple[list[str], Truth]:
    """One session's OTLP/JSON lines and its truth."""
    facts = _facts(domain, language, variant, n)
    sid = f"{domain.name}-{language}-{variant}-{n}"
    session = Session(sid, fixed_resource(f"{domain.name}-agent"), epoch_ns(2026, 5, 7, 9, 0))
    agent = GenAIAgent(session, sid, "gpt-4o", _tools(domain))
    member = _transpose(facts.member) if variant == "wrong_argument" else facts.member
    verify = ToolCall(
        "call_verify",
        "verify_member",
        {"member_id": member, "date_of_birth": facts.dob.isoformat()},
        spaced({"verified": True}),
    )
    lookup = ToolCall(
        "call_lookup",
        domain.tool,
        {"reference": facts.reference},
        spaced(_record(domain, facts, variant)),
    )
    question = QUESTIONS[language].format(
        noun=domain.nouns[language],
        ref=facts.reference,
        member=facts.member,
        dob=_date_text(language, facts.dob, "long"),
    )
    weekday = facts.today.strftime("%A")
    history: list[dict[str, Any]] = [
        message(
            "system",
            text_part(
                f"You are the {domain.name.replace('_', ' ')} assistant. "
                f"Today is {facts.today.isoformat()} ({weekday}). Answer in the user's language."
            ),
        ),
        message("user", text_part(question)),
    ]
    stated_turn = bool(_rng("shape", sid) % 2)
    with (
        _conversation_turn(session, sid, stated_turn),
        agent.invoke_agent(f"{domain.name}_agent", root=not stated_turn),
    ):
        history.append(agent.chat(history, calls=[verify]))
        with agent.execute_tool(verify):
            pass
        history += tool_messages([verify])
        if variant == "retry":
            failed = ToolCall(
                "call_lookup_0",
                domain.tool,
                {"reference": facts.reference},
                "",
                error=TimeoutError("upstream timed out"),
            )
            history.append(agent.chat(history, calls=[failed]))
            with agent.execute_tool(failed):
                pass
            history.append(
                message(
                    "tool",
                    {
                        "type": "tool_call_response",
                        "id": failed.id,
                        "response": "error: upstream timed out",
                    },
                )
            )
        history.append(agent.chat(history, calls=[lookup]))
        with agent.execute_tool(lookup):
            pass
        history += tool_messages([lookup])
        agent.chat(history, text=_answer(domain, language, variant, facts))
    wrong = variant in WRONG
    kind, name = ("tool_call", "verify_member") if variant == "wrong_argument" else ("answer", None)
    truth = Truth(
        sid,
        domain.name,
        language,
        variant,
        wrong,
        kind if wrong else None,
        name if wrong else None,
        "conversation_turn" if stated_turn else "invocation",
    )
    return session.lines(), truth


def record_flow(domain: Domain, language: str, variant: str, n: int) -> tuple[list[str], Truth]:
    """One session of :mod:`bench.domains.flows` and its truth."""
    facts = _facts(domain, language, variant, n)
    sid = f"{domain.name}-{language}-{variant}-{n}"
    session = Session(sid, fixed_resource(f"{domain.name}-agent"), epoch_ns(2026, 5, 7, 9, 0))
    question = QUESTIONS[language].format(
        noun=domain.nouns[language],
        ref=facts.reference,
        member=facts.member,
        dob=_date_text(language, facts.dob, "long"),
    )
    history: list[dict[str, Any]] = [
        message("system", text_part(f"You are the {domain.name.replace('_', ' ')} assistant.")),
        message("user", text_part(question)),
    ]
    seed = _rng("flow", sid)
    lookup = ToolCall(
        "call_lookup",
        domain.tool,
        {"reference": facts.reference},
        spaced(_record(domain, facts, variant)),
    )
    flow = _Flow(session, domain, language, variant, facts, history, lookup, seed)
    (_relay if variant in flows.RELAYS else _act)(flow)
    relay_wrong = variant in flows.RELAYS and variant != "relay_right_1"
    claims = variant in flows.CLAIMS
    expected = (
        ("answer", None)
        if relay_wrong
        else ("tool_call", _action(domain, seed)[0].name)
        if claims
        else (None, None)
    )
    truth = Truth(
        sid,
        domain.name,
        language,
        variant,
        relay_wrong or claims,
        *expected,
        inherits={"relay_wrong_1": 1, "relay_wrong_2": 2}.get(variant, 0),
        answer_fails=claims and variant != "honest_failure",
        answer_suspect=variant == "doubt_in_answer",
    )
    return session.lines(), truth


@dataclass(frozen=True)
class _Flow:
    """What one flow session is recorded from."""

    session: Session
    domain: Domain
    language: str
    variant: str
    facts: Facts
    history: list[dict[str, Any]]
    lookup: ToolCall
    seed: int


def _act(flow: _Flow) -> None:
    """One agent looks the record up (guessing in its reasoning first, for
    ``doubt_in_reasoning``), acts when the flow is a claim, and answers."""
    session, domain, language, variant = flow.session, flow.domain, flow.language, flow.variant
    facts, history, lookup, seed = flow.facts, flow.history, flow.lookup, flow.seed
    agent = GenAIAgent(session, session.seed, "gpt-4o", (*_tools(domain), *_action(domain, seed)))
    thought = (
        flows.reasoning_text(domain, language, facts) if variant == "doubt_in_reasoning" else None
    )
    with agent.invoke_agent(f"{domain.name}_agent", root=True):
        history.append(agent.chat(history, text=thought, calls=[lookup]))
        with agent.execute_tool(lookup):
            pass
        history += tool_messages([lookup])
        if variant in flows.CLAIMS:
            _failed_action(agent, history, domain, facts, seed, variant)
            text = (
                flows.honest_answer(domain, language, facts)
                if variant == "honest_failure"
                else flows.claimed_answer(
                    domain,
                    language,
                    facts,
                    flows.action_verb(seed),
                    _date_text(language, facts.day, "long"),
                    seed,
                )
            )
        else:
            text = _answer(domain, language, "paraphrase", facts)
            if variant == "doubt_in_answer":
                text += flows.extra_sentence(language, seed)
        agent.chat(history, text=text)


def _action(domain: Domain, seed: int) -> tuple[ToolSpec]:
    noun = domain.nouns["en"].replace(" ", "_")
    return (
        ToolSpec(
            f"{flows.action_verb(seed)}_{noun}",
            f"Act on a {domain.nouns['en']}.",
            schema({"reference": {"type": "string"}}),
        ),
    )


def _failed_action(
    agent: GenAIAgent,
    history: list[dict[str, Any]],
    domain: Domain,
    facts: Facts,
    seed: int,
    variant: str,
) -> None:
    """The action call, failed and not retried."""
    error = flows.failure(variant)
    call = ToolCall(
        "call_act", _action(domain, seed)[0].name, {"reference": facts.reference}, "", error=error
    )
    history.append(agent.chat(history, calls=[call]))
    with agent.execute_tool(call):
        pass
    history.append(
        message(
            "tool", {"type": "tool_call_response", "id": call.id, "response": f"error: {error}"}
        )
    )


def _relay(flow: _Flow) -> None:
    """The user's agent asks a specialist (through a coordinator at two levels), which
    looks the record up and states the amount; every agent above repeats it (in another
    format: the English currency style)."""
    session, domain, language, variant = flow.session, flow.domain, flow.language, flow.variant
    facts, history, lookup = flow.facts, flow.history, flow.lookup
    amount = facts.amount if variant == "relay_right_1" else flows.wrong_amount(facts.amount)
    said = flows.relayed_answer(domain, language, amount, facts.reference)
    relayed = said.replace(flows.money(amount, domain, language), flows.money(amount, domain, "en"))
    ask = ToolSpec("ask_specialist", "Ask the specialist.", schema({"task": {"type": "string"}}))
    ask_coordinator = ToolSpec(
        "ask_coordinator", "Ask the coordinator.", schema({"task": {"type": "string"}})
    )
    conversation = session.seed
    top = GenAIAgent(
        session, conversation, "gpt-4o", (ask_coordinator if variant == "relay_wrong_2" else ask,)
    )
    coordinator = GenAIAgent(session, conversation, "gpt-4o-mini", (ask,))
    specialist = GenAIAgent(session, conversation, "gpt-4o-mini", _tools(domain))
    task = f"Amount owed for {facts.reference}"

    def run(agent: GenAIAgent, name: str, call: ToolCall, answer: str, inside: Any = None) -> Any:
        def step() -> None:
            agent.answer_task(name, f"You are the {name}.", task, call, answer, inside)

        return step

    specialist_run = run(specialist, "specialist", lookup, said)
    delegated = ToolCall("call_specialist", "ask_specialist", {"task": task}, said)
    coordinator_run = run(coordinator, "coordinator", delegated, relayed, specialist_run)

    two = variant == "relay_wrong_2"
    call = ToolCall(
        "call_ask",
        "ask_coordinator" if two else "ask_specialist",
        {"task": task},
        relayed if two else said,
    )
    with top.invoke_agent(f"{domain.name}_agent", root=True):
        history.append(top.chat(history, calls=[call]))
        with top.execute_tool(call):
            (coordinator_run if two else specialist_run)()
        history += tool_messages([call])
        top.chat(history, text=relayed)


@contextmanager
def _conversation_turn(session: Session, sid: str, stated: bool) -> Iterator[None]:
    """The newer turn shape: the runner's ``handle_conversation_turn`` span around the
    agent's invocation (GenAI conventions); the older shape has the invocation alone."""
    if not stated:
        yield
        return
    attributes = {
        "gen_ai.operation.name": "handle_conversation_turn",
        "gen_ai.conversation.id": sid,
    }
    with session.span(GENAI_APP_SCOPE, "handle_conversation_turn", attributes, root=True):
        yield


def natural_case(domain: Domain, language: str, variant: str, n: int) -> dict[str, Any]:
    """The cases-file row a team would write: the record's facts by name, and an English key
    point of what the user asked — the appointment's day and time; a relay's user asks the
    amount owed instead, so its row holds the facts alone."""
    facts = _facts(domain, language, variant, n)
    row = {
        "session_id": f"{domain.name}-{language}-{variant}-{n}",
        "type": "happy",
        "facts": {
            "date": facts.day.isoformat(),
            "time": facts.moment.strftime("%H:%M"),
            "reference": facts.reference,
        },
        "key_points": [
            f"{domain.nouns['en']} on {_date_text('en', facts.day, 'long')} "
            f"at {facts.moment.strftime('%H:%M')}"
        ],
    }
    if variant in flows.RELAYS:
        del row["key_points"]
    return row


def generate(out: Path, per_variant: int = 1, domains: tuple[Domain, ...] = DOMAINS) -> list[Truth]:
    """Write ``traces.otlp.jsonl``, ``cases.jsonl`` and ``truth.jsonl`` under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    lines: list[str] = []
    cases: list[dict[str, Any]] = []
    truths: list[Truth] = []
    for domain in domains:
        for language in LANGUAGES:
            for variant in VARIANTS + flows.FLOWS:
                for n in range(per_variant):
                    record = record_flow if variant in flows.FLOWS else record_session
                    spans, truth = record(domain, language, variant, n)
                    lines += spans
                    truths.append(truth)
                    cases.append(natural_case(domain, language, variant, n))
    write_lines(out / "traces.otlp.jsonl", lines)
    (out / "cases.jsonl").write_text(
        "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in cases), encoding="utf-8"
    )
    (out / "truth.jsonl").write_text(
        "".join(json.dumps(t.__dict__, ensure_ascii=False) + "\n" for t in truths),
        encoding="utf-8",
    )
    return truths
