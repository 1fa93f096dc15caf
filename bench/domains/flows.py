"""The generator's variants about what reached the user (issue: inheritance, claimed
success, suspects), recorded like the others: one domain, one language, truth by
construction.

- ``relay_wrong_1`` / ``relay_wrong_2``: a specialist sub-agent (one or two levels below
  the agent the user talks to) contradicts its own look-up on the amount; every agent
  above repeats the amount. The proof sits at the specialist's answer; each answer above
  inherits it. ``relay_right_1``: the same relay with the right amount (no failure).
- ``claimed_timeout`` / ``claimed_error``: the action call fails (a timeout, a refused
  connection) and is not retried; the answer
  says it is done (half the sessions with a confirmation id). The call is the root cause;
  the answer must fail for the claim. ``honest_failure``: the answer says it could not.
- ``doubt_in_reasoning``: a reasoning step states a value nothing supports; the answer is
  right (no suspect). ``doubt_in_answer``: the answer adds such a value (a suspect at
  the answer, no root cause).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from babel.numbers import format_currency

if TYPE_CHECKING:
    from bench.domains.catalog import Domain
    from bench.domains.generate import Facts

RELAYS = ("relay_wrong_1", "relay_wrong_2", "relay_right_1")
CLAIMS = ("claimed_timeout", "claimed_error", "honest_failure")
DOUBTS = ("doubt_in_reasoning", "doubt_in_answer")
FLOWS = RELAYS + CLAIMS + DOUBTS
WRONG_FLOWS = frozenset({"relay_wrong_1", "relay_wrong_2", *CLAIMS})

# The action tool's verb, by domain position: no single verb the reader could be fit to.
ACTION_VERBS = ("book", "reserve", "schedule", "confirm", "submit", "register")

RELAYED = {
    "en": "The {noun} {ref} costs {amount}.",
    "de": "Für {noun} {ref} fallen {amount} an.",
    "es": "La {noun} {ref} cuesta {amount}.",
    "ru": "{noun} {ref}: к оплате {amount}.",
}
DONE = {
    "en": ("Done: your {noun} {ref} is {past} for {date}.", "Confirmation number: {conf}."),
    "de": ("Erledigt: Ihr {noun} {ref} ist für den {date} {past}.", "Buchungsnummer: {conf}."),
    "es": ("Listo: su {noun} {ref} quedó {past} para el {date}.", "Número de reserva: {conf}."),
    "ru": ("Готово: ваша {noun} {ref} {past} на {date}.", "Номер брони: {conf}."),
}
_PAST = {
    "en": ("booked", "reserved", "scheduled", "confirmed", "submitted", "registered"),
    "de": ("gebucht", "reserviert", "eingetragen", "bestätigt", "eingereicht", "angemeldet"),
    "es": ("reservada", "reservada", "agendada", "confirmada", "enviada", "registrada"),
    "ru": (
        "оформлена",
        "забронирована",
        "записана",
        "подтверждена",
        "отправлена",
        "зарегистрирована",
    ),
}
PAST = {language: dict(zip(ACTION_VERBS, forms, strict=True)) for language, forms in _PAST.items()}
HONEST = {
    "en": "I could not complete the {noun} {ref}: the system did not respond. Shall I retry?",
    "de": "Ich konnte {noun} {ref} leider nicht abschließen: das System antwortete nicht.",
    "es": "No pude completar la {noun} {ref}: el sistema no respondió.",
    "ru": "Не удалось оформить {noun} {ref}: система не ответила.",
}
REASONING = {
    "en": "Usually this costs about {guess}; let me look the record up.",
    "de": "Üblicherweise kostet das etwa {guess}; ich schaue nach.",
    "es": "Normalmente cuesta unos {guess}; voy a consultar el registro.",
    "ru": "Обычно это стоит около {guess}; проверю запись.",
}
EXTRA = {
    "en": " Please go to room {gate}.",
    "de": " Bitte gehen Sie in Raum {gate}.",
    "es": " Por favor, vaya a la sala {gate}.",
    "ru": " Пройдите, пожалуйста, в кабинет {gate}.",
}


def action_verb(seed: int) -> str:
    return ACTION_VERBS[seed % len(ACTION_VERBS)]


def money(amount: float, domain: Domain, language: str) -> str:
    text = format_currency(amount, domain.currency, locale=language)
    return text.replace("\u202f", " ").replace("\xa0", " ")


def relayed_answer(domain: Domain, language: str, amount: float, ref: str) -> str:
    return RELAYED[language].format(
        noun=domain.nouns[language], ref=ref, amount=money(amount, domain, language)
    )


def claimed_answer(
    domain: Domain, language: str, facts: Facts, verb: str, date_text: str, seed: int
) -> str:
    """The answer that says the failed action is done (every other seed with an id)."""
    first, second = DONE[language]
    text = first.format(
        noun=domain.nouns[language], ref=facts.reference, past=PAST[language][verb], date=date_text
    )
    if (seed >> 3) % 2:  # without the leading "Done:"
        text = text.split(": ", 1)[1]
        text = text[0].upper() + text[1:]
    if seed % 2:
        text += " " + second.format(conf=f"BK-{1000 + seed % 9000}")
    return text


def honest_answer(domain: Domain, language: str, facts: Facts) -> str:
    return HONEST[language].format(noun=domain.nouns[language], ref=facts.reference)


def reasoning_text(domain: Domain, language: str, facts: Facts) -> str:
    return REASONING[language].format(guess=money(facts.amount * 3 + 7, domain, language))


def extra_sentence(language: str, seed: int) -> str:
    return EXTRA[language].format(gate=f"{300 + seed % 600}")


def wrong_amount(amount: float) -> float:
    return amount + (5 if amount < 100 else 40)


def failure(variant: str) -> BaseException:
    """How the action call fails."""
    if variant == "claimed_timeout":
        return TimeoutError("booking service timed out")
    return ConnectionError("HTTP 503 from booking service")
