"""The domains and languages the session generator writes, as data.

Why data and not code per domain: a rule AEM learns from one domain's wording must hold on
the others, so a domain here is only what differs between businesses — the thing booked
or owed, the tool that looks it up, the person in charge, the currency — and every
sentence is written from the same per-language templates. Adding a domain is one row.
"""

from __future__ import annotations

from dataclasses import dataclass

LANGUAGES = ("en", "de", "es", "ru")


@dataclass(frozen=True)
class Domain:
    """One business: what its record is called in each language, and how it is looked up."""

    name: str
    tool: str  # the look-up tool
    prefix: str  # of the record's reference id
    role: str  # the record's field naming the person in charge
    currency: str
    nouns: dict[str, str]  # language -> the record's noun
    amount_range: tuple[int, int]


DOMAINS = (
    Domain(
        "scheduling",
        "get_appointment",
        "APT",
        "doctor",
        "EUR",
        {"en": "appointment", "de": "Termin", "es": "cita", "ru": "запись"},
        (20, 180),
    ),
    Domain(
        "banking",
        "get_transfer",
        "TRF",
        "advisor",
        "EUR",
        {"en": "transfer", "de": "Überweisung", "es": "transferencia", "ru": "перевод"},
        (50, 5000),
    ),
    Domain(
        "logistics",
        "get_shipment",
        "SHP",
        "courier",
        "USD",
        {"en": "delivery", "de": "Lieferung", "es": "entrega", "ru": "доставка"},
        (8, 120),
    ),
    Domain(
        "retail_returns",
        "lookup_return",
        "RMA",
        "agent",
        "GBP",
        {"en": "return", "de": "Rücksendung", "es": "devolución", "ru": "возврат"},
        (15, 600),
    ),
    Domain(
        "hr",
        "fetch_interview",
        "INT",
        "recruiter",
        "EUR",
        {
            "en": "interview",
            "de": "Vorstellungsgespräch",
            "es": "entrevista",
            "ru": "собеседование",
        },
        (0, 90),
    ),
    Domain(
        "travel",
        "get_booking",
        "BKG",
        "guide",
        "EUR",
        {"en": "tour", "de": "Führung", "es": "visita guiada", "ru": "экскурсия"},
        (30, 900),
    ),
    Domain(
        "insurance",
        "get_claim_visit",
        "CLM",
        "assessor",
        "CHF",
        {"en": "inspection", "de": "Besichtigung", "es": "inspección", "ru": "осмотр"},
        (100, 2500),
    ),
    Domain(
        "utilities",
        "get_service_visit",
        "SRV",
        "technician",
        "EUR",
        {
            "en": "meter reading",
            "de": "Zählerablesung",
            "es": "lectura del contador",
            "ru": "визит",
        },
        (25, 300),
    ),
    Domain(
        "real_estate",
        "get_viewing",
        "VW",
        "agent",
        "EUR",
        {"en": "viewing", "de": "Besichtigungstermin", "es": "visita", "ru": "просмотр"},
        (0, 250),
    ),
    Domain(
        "education",
        "get_exam",
        "EXM",
        "examiner",
        "USD",
        {"en": "exam", "de": "Prüfung", "es": "examen", "ru": "экзамен"},
        (40, 400),
    ),
    Domain(
        "government",
        "get_appointment_slot",
        "GOV",
        "officer",
        "EUR",
        {
            "en": "passport appointment",
            "de": "Passtermin",
            "es": "cita de pasaporte",
            "ru": "приём",
        },
        (10, 140),
    ),
    Domain(
        "telecom",
        "get_installation",
        "INS",
        "engineer",
        "RUB",
        {"en": "installation", "de": "Installation", "es": "instalación", "ru": "подключение"},
        (500, 9000),
    ),
)

# People in charge: names with diacritics and in Cyrillic, so a name compares as a name.
PEOPLE = {
    "en": ("Dr. Anna Weber", "Mark Collins", "Sarah O'Neil", "James Patel"),
    "de": ("Dr. Jürgen Müller", "Anna Schäfer", "Prof. Klaus Becker", "Petra Wölfel"),
    "es": ("Dra. María Gómez", "José Núñez", "Lucía Fernández", "Dr. Andrés Ruiz"),
    "ru": ("Анна Смирнова", "Игорь Петров", "Дмитрий Волков", "Елена Кузнецова"),
}
