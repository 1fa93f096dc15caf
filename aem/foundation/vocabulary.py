"""Every word list AEM reads text with, once: the calendar of English, German, Spanish and
Russian from CLDR (babel), the rest English and Russian side by side.

Why one module at the bottom of the layers: month names, stop words, negations,
magnitudes and refusal cues were copied into the date parser, the clock, value support,
entailment, completeness, the embedded judge and the taxonomy command, and a copy that
drifts changes what one of them reads while the others stay. It imports nothing of
AEM, so :mod:`aem.compare` (the lowest reader) and everything above it can use it.

Each caller keeps the content it read before. Where copies differed they are kept as
a base list plus the caller's own words, each word written once:

* stop words — :data:`FUNCTION_WORDS_EN` is completeness's list (articles, prepositions,
  copulas); :data:`STOP_WORDS` (entailment's content stems) adds pronouns, modals and
  more to it, and the Russian ones; :data:`EXPLANATION_STOP_WORDS` (the taxonomy
  command's, of words of four letters and more) and :data:`TOOL_NAME_FILLER` (the words
  of a tool's name that name no action) are lists of their own.
* month names — :data:`MONTHS_EN` (full, lower case) and its three-letter
  :data:`MONTH_ABBREVIATIONS_EN`; :data:`MONTHS_EN_PATTERN` is the regex alternation
  the date parser reads case-insensitively and the clock capitalised
  (:func:`capitalised_alternation`: "may" alone is a verb); :data:`MONTHS_RU_GENITIVE`
  ("26 мая").
* refusal cues — :data:`REFUSAL_CUES` is the refusal metric's; the embedded judge's
  :data:`DECLINE_CUES` is a narrower list (it scores, it does not detect refusals) and
  stays as it was.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from babel import Locale
from babel.dates import get_day_names, get_month_names

# --- calendar ----------------------------------------------------------------------------
MONTHS_EN = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
MONTH_ABBREVIATIONS_EN = tuple(month[:3] for month in MONTHS_EN)
# "Sept", "June", "July" and the abbreviations; read case-insensitively by the date
# parser, capitalised by the clock.
MONTHS_EN_PATTERN = (
    "jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    "|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
)
MONTHS_RU_GENITIVE = (  # "26 мая"
    "января",
    "февраля",
    "марта",
    "апреля",
    "мая",
    "июня",
    "июля",
    "августа",
    "сентября",
    "октября",
    "ноября",
    "декабря",
)
WEEKDAYS_EN = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def capitalised_alternation(pattern: str) -> str:
    """``pattern``'s alternatives each capitalised: ``jan(?:uary)?|may`` → ``Jan(?:uary)?|May``."""
    return "|".join(alternative.capitalize() for alternative in pattern.split("|"))


# Calendar words of every language AEM reads, from CLDR through babel: month names in
# their format and stand-alone forms, wide and abbreviated ("Mai", "mayo", "мая", "май",
# "Sept."), weekday names, and the words for a day relative to today ("tomorrow",
# "übermorgen", "el próximo martes", "в следующий вторник"). Why CLDR and not lists typed
# here: the lists were English and Russian only, and German and Spanish dates in words
# were read as bare numbers. A language outside READ_LANGUAGES is not read, and says so.
READ_LANGUAGES = ("en", "de", "es", "ru")
_WEEKDAY_KEYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


def _calendar_names(kind: str) -> dict[str, int]:
    """Lower-cased month (1–12) or weekday (0–6) names of the read languages; a name two
    languages give different meanings is left out (none do today)."""
    getter = get_month_names if kind == "month" else get_day_names
    names: dict[str, int] = {}
    clashes: set[str] = set()
    for language in READ_LANGUAGES:
        for width in ("wide", "abbreviated"):
            for context in ("format", "stand-alone"):
                for number, name in getter(width, context, language).items():
                    word = str(name).lower().rstrip(".")
                    if names.setdefault(word, int(number)) != int(number):
                        clashes.add(word)
    return {word: n for word, n in names.items() if word not in clashes and len(word) >= 3}


def _relative_days() -> dict[str, tuple[int, int | None]]:
    """Phrase (lower case) → (offset, weekday): "tomorrow" → (1, None); "next tuesday" →
    (1, 1), the Tuesday of next week; "this tuesday" → (0, 1), this week's."""
    phrases: dict[str, tuple[int, int | None]] = {}
    for language in READ_LANGUAGES:
        # babel keeps CLDR's relative-day fields only in its locale data (its own
        # format_timedelta reads them there): no public accessor exists.
        fields = Locale.parse(language)._data["date_fields"]
        for offset, phrase in fields["day"]["relative"].items():
            if offset != 0:  # "today" is the session's date itself, stated by nobody
                phrases[str(phrase).lower()] = (int(offset), None)
        for weekday, key in enumerate(_WEEKDAY_KEYS):
            for offset, phrase in fields[key]["relative"].items():
                phrases[str(phrase).lower()] = (int(offset), weekday)
    return phrases


def _counts_ahead() -> dict[str, tuple[str, ...]]:
    """CLDR's phrases for a count of days or weeks ahead, lower case, ``{0}`` for the count:
    "in {0} days", "in {0} tagen", "dentro de {0} días", "через {0} дня" (every plural form)."""
    found: dict[str, set[str]] = {"day": set(), "week": set()}
    for language in READ_LANGUAGES:
        fields = Locale.parse(language)._data["date_fields"]  # as in _relative_days
        for unit, phrases in found.items():
            phrases.update(str(p).lower() for p in fields[unit]["future"].values())
    return {unit: tuple(sorted(phrases)) for unit, phrases in found.items()}


def _duration_words() -> dict[str, frozenset[str]]:
    """The words a count of days or weeks is written with ("5 days", "5 Tage", "5 Tagen",
    "5 дней"), lower case: CLDR's long unit names in every plural form, and the unit
    words of :data:`COUNTS_AHEAD` (German's dative "Tagen" is only there)."""
    words: dict[str, set[str]] = {unit: set() for unit in COUNTS_AHEAD}
    for language in READ_LANGUAGES:
        patterns = Locale.parse(language)._data["unit_patterns"]
        for unit, found in words.items():
            for form, pattern in patterns[f"duration-{unit}"]["long"].items():
                if form != "per":  # "{0} per day" is a rate, not a count
                    found.add(str(pattern).replace("{0}", "").strip().lower())
    for unit, phrases in COUNTS_AHEAD.items():
        words[unit].update(phrase.split("{0}", 1)[1].strip() for phrase in phrases)
    return {unit: frozenset(found) for unit, found in words.items()}


MONTH_NUMBERS = _calendar_names("month")
WEEKDAY_NUMBERS = _calendar_names("weekday")
RELATIVE_DAYS = _relative_days()
COUNTS_AHEAD = _counts_ahead()
DURATION_WORDS = _duration_words()


def alternation(words: Iterable[str]) -> str:
    """A regex alternation of ``words``, longest first (so "mayo" wins over "may")."""
    return "|".join(re.escape(w) for w in sorted(set(words), key=lambda w: (-len(w), w)))


# Month names of any read language (read case-insensitively after a day number).
MONTH_NAMES_PATTERN = alternation(MONTH_NUMBERS)
WEEKDAY_NAMES_PATTERN = alternation(WEEKDAY_NUMBERS)


# Words written with a full stop that ends no sentence: titles before a name ("Dr. Weber",
# "Dra. Gómez", "Prof. Becker", "г-н"), and common abbreviations of the read languages;
# every CLDR abbreviated month name joins them ("Sept.", "сент.", "Jan."). Why a list and
# not pysbd: pysbd needs the text's language first (its English rules cut "am 22. Juli",
# its Spanish ones "Dra. Gómez"), and costs 0.3–0.6 ms a sentence.
ABBREVIATIONS = frozenset(
    {
        *("dr", "dra", "drs", "prof", "mr", "mrs", "ms", "mx", "sr", "sra", "srta", "jr"),
        *("hr", "fr", "hrn", "nr", "vs", "etc", "ca", "approx", "inc", "ltd", "corp"),
        *("bzw", "usw", "ggf", "inkl", "zzgl", "tel", "ing", "lic", "av", "ud", "uds"),
        *("pág", "núm", "г", "гг", "ул", "им", "тел", "руб", "коп"),
        *("e.g", "i.e", "z.b", "d.h", "u.a", "т.е", "т.д", "т.п"),
        # Abbreviated month names that are no whole name too ("Sept.", "сент."; not "May").
        *(
            str(name).lower().rstrip(".")
            for language in READ_LANGUAGES
            for name in get_month_names("abbreviated", locale=language).values()
        ),
    }
    - {
        str(name).lower()
        for language in READ_LANGUAGES
        for name in get_month_names("wide", locale=language).values()
    }
)


# The commonest function words of each read language: a text's language is the one
# whose words it uses most (two at least), else unknown. Why not a detector library: the
# question is only "which of four", asked of short sentences, on every claim; a vote of
# function words answers it in microseconds, and None ("not read") where it cannot.
LANGUAGE_WORDS = {
    language: frozenset(words.split())
    for language, words in (
        ("en", "the a an is are was of to and in on at with for your you it this that be has"),
        (
            "de",
            "der die das ist und im am um bei ein eine nicht mit für ihr ihre sie es den dem "
            "des zu auf wird sind kostet",
        ),
        ("es", "el la los las es y en de del con por para su un una que se lo le al son está"),
        ("ru", "и в на с по для не что это ваш ваша вас ваше к от до за у о как"),
    )
}
_LANGUAGE_WORD = re.compile(r"[^\W\d_]+")


def language_of(text: str) -> str | None:
    """The read language ``text`` is written in, by a vote of function words, or None.

    >>> language_of("Ihr Termin ist am 12. Mai um 9 Uhr."), language_of("12:30")
    ('de', None)
    """
    counts = dict.fromkeys(LANGUAGE_WORDS, 0)
    for word in _LANGUAGE_WORD.findall(text.lower()):
        for language, known in LANGUAGE_WORDS.items():
            if word in known:
                counts[language] += 1
    best = max(counts, key=lambda language: counts[language])
    ranked = sorted(counts.values(), reverse=True)
    return best if ranked[0] >= 2 and ranked[0] > ranked[1] else None


def unread_language(text: str) -> bool:
    """Whether ``text`` is plainly in a language whose values AEM does not read: mostly
    letters of another script (Chinese, Arabic, Greek …), or six words or more of which
    none is a function word of a read language (French, Italian …). A short or mixed
    text is not judged so: it is only read with less to go on.

    >>> unread_language("Votre rendez-vous est confirmé pour mardi prochain, merci beaucoup.")
    True
    >>> unread_language("您的预约已确认。"), unread_language("Your booking is confirmed.")
    (True, False)
    """
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return False
    other = sum(1 for c in letters if ord(c) > 0x24F and not 0x400 <= ord(c) <= 0x4FF)
    if other * 2 > len(letters):
        return True
    words = _LANGUAGE_WORD.findall(text.lower())
    known = frozenset().union(*LANGUAGE_WORDS.values())
    return len(words) >= 6 and not any(word in known for word in words)


# --- stop words --------------------------------------------------------------------------
FUNCTION_WORDS_EN = frozenset(
    {
        *("a", "an", "the", "of", "for", "in", "on", "at", "to", "and", "or", "is"),
        *("are", "was", "were", "be", "by", "with", "from", "that", "this", "it", "its", "as"),
    }
)
STOP_WORDS_EN = FUNCTION_WORDS_EN | {
    *("but", "been", "being", "these", "those", "you", "your", "we", "our", "they", "their"),
    *("he", "she", "his", "her", "i", "my", "me", "us", "them", "can", "could", "will"),
    *("would", "shall", "should", "may", "might", "must", "do", "does", "did", "has"),
    *("have", "had", "not", "no", "there", "here", "than", "then", "so", "if", "when"),
    *("which", "who", "what", "how", "also", "about", "into", "over", "after", "before"),
}
STOP_WORDS_RU = frozenset(
    {
        *("и", "в", "во", "на", "с", "со", "по", "к", "ко", "у", "о", "об", "от", "до", "из"),
        *("за", "для", "при", "что", "это", "как", "а", "но", "же", "ли", "бы", "не", "ни"),
        *("вы", "вам", "ваш", "ваша", "ваши", "мы", "нас", "наш", "она", "он", "они", "оно"),
        *("его", "её", "их", "быть", "был", "была", "были", "есть"),
    }
)
STOP_WORDS = STOP_WORDS_EN | STOP_WORDS_RU
DETERMINERS_EN = frozenset({"the", "your", "our", "my", "a", "an", "this", "these", "those", "its"})
TOOL_NAME_FILLER = frozenset(
    {"a", "an", "the", "to", "of", "for", "by", "id", "ids", "info", "details", "data", "tool"}
)
EXPLANATION_STOP_WORDS = frozenset(
    {
        *("that", "this", "with", "from", "were", "have", "been", "than", "then", "they"),
        *("them", "their", "there", "which", "what", "when", "where", "does", "into", "only"),
        *("also", "some", "none", "more", "most", "other", "turn", "call", "calls", "tool"),
    }
)

# --- negation ----------------------------------------------------------------------------
NEGATIONS = frozenset(
    {
        *("not", "no", "never", "cannot", "cant", "can't", "won't", "don't", "doesn't"),
        *("isn't", "aren't", "wasn't", "weren't", "without", "none", "nor"),
        *("не", "нет", "нельзя", "никогда", "ни", "без"),
    }
)

# --- numbers -----------------------------------------------------------------------------
# Magnitude words after a number ("3 million"), in the order the number pattern tries them.
MAGNITUDE_WORDS = {"thousand": 1e3, "million": 1e6, "billion": 1e9}

# Number words a count or an amount is written in ("three options", "три варианта"): the
# value extractor reads them as numbers, so "two articles" is the count 2 whether it is
# written in digits or not. Russian keeps the nominative and the genitive forms a count
# takes ("два варианта", "двух статей").
NUMBER_WORDS_EN = {
    **{"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7},
    **{"eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13},
    **{"fourteen": 14},
    **{"fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19},
    **{"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70},
    **{"eighty": 80, "ninety": 90, "hundred": 100, "dozen": 12},
}
NUMBER_WORDS_RU = {
    **dict.fromkeys(("один", "одна", "одно", "одного", "одной"), 1),
    **dict.fromkeys(("два", "две", "двух"), 2),
    **dict.fromkeys(("три", "трёх", "трех"), 3),
    **dict.fromkeys(("четыре", "четырёх", "четырех"), 4),
    **dict.fromkeys(("пять", "пяти"), 5),
    **dict.fromkeys(("шесть", "шести"), 6),
    **dict.fromkeys(("семь", "семи"), 7),
    **dict.fromkeys(("восемь", "восьми"), 8),
    **dict.fromkeys(("девять", "девяти"), 9),
    **dict.fromkeys(("десять", "десяти"), 10),
    **{"одиннадцать": 11, "двенадцать": 12, "тринадцать": 13, "четырнадцать": 14},
    **{"пятнадцать": 15, "шестнадцать": 16, "семнадцать": 17, "восемнадцать": 18},
    **{"девятнадцать": 19, "двадцать": 20, "тридцать": 30, "сорок": 40, "пятьдесят": 50},
    **{"сто": 100, "дюжина": 12, "дюжины": 12},
}
NUMBER_WORDS = {**NUMBER_WORDS_EN, **NUMBER_WORDS_RU}
# What the documents of a retrieval are called when an answer counts them ("two
# articles", "3 sources", "две статьи"): the beginnings of the words.
DOCUMENT_NOUNS = (
    *("articl", "document", "source", "result", "passage", "page", "paper", "post", "record"),
    *("entr", "item", "стат", "докум", "источник", "материал", "запис", "результат"),
)
CURRENCY_CODES = ("USD", "EUR", "GBP", "JPY", "RUB", "INR", "CHF", "CNY", "CAD", "AUD")

# --- refusals ----------------------------------------------------------------------------
REFUSAL_CUES = re.compile(
    r"\b(?:i (?:do not|don't|dont|did not|didn't) (?:know|find|have (?:(?:that|this|any|the|"
    r"enough|such|access to) )?(?:information|data|details|access|an answer))"
    r"|i(?:'m| am) (?:not (?:sure|certain|aware)|unable to|not able to|afraid i (?:can't|cannot|"
    r"don't))|i (?:cannot|can't|can not|could not|couldn't) (?:find|tell|say|confirm|answer|"
    r"help|provide|give|check|look up)|(?:there is|there's|i have|i found|with) no information"
    r"|no (?:information|details|data) (?:about|on|regarding|for)"
    r"|(?:outside|beyond) (?:my|the|our) (?:scope|knowledge|sources)"
    r"|(?:sources|documents|knowledge base) (?:do not|don't|does not|doesn't) "
    r"(?:cover|say|mention|contain)|not something i can (?:help|answer)"
    r"|(?:isn't|is not|aren't|are not|not) covered (?:by|in) (?:my|our|the) (?:\w+ )?"
    r"(?:sources?|documents?|documentation|knowledge|materials?|information|data|faq)"
    r"|no way to (?:check|know|tell|find|verify|confirm)"
    r"|i have no (?:data|information|details|answer))"
    r"|не знаю|не могу (?:вам )?(?:это(?:го)? |об этом )?(?:помочь|ответить|подсказать|сказать|"
    r"найти|дать|проверить)|нет (?:\w+ )?(?:информации|данных|сведений|ответа)"
    r"|(?:информации|данных|сведений) (?:\w+ ){0,4}нет\b|не располагаю|не наш(?:ёл|ел|ла)"
    r"|не удалось найти|вне (?:моей|нашей) компетенции|затрудняюсь (?:ответить|сказать)"
    r"|ничего не известно|мне (?:это )?неизвестно|не уверен"
    r"|не (?:имею|владею) (?:\w+ )?(?:информацией|данными|сведениями)",
    re.IGNORECASE,
)
# A request declined as not possible: "the flights cannot be modified", "that is not
# allowed", "я не могу изменить бронь", "вернуть билет нельзя". Declines only with its
# reason in the context (the refusal metric checks it like any claim): unsupported, it
# is an invented rule, not an honest refusal.
IMPOSSIBILITY_CUES = re.compile(
    r"\b(?:cannot|can't|can not|could not|couldn't|won't|will not) be (?:\w+ed|\w+en|done|made)\b"
    r"|\b(?:is|are|was|were) not (?:possible|allowed|permitted|eligible)\b"
    r"|\b(?:isn't|aren't|wasn't|weren't) (?:possible|allowed|permitted|eligible)\b"
    r"|\b(?:i|we) (?:cannot|can't|can not|am unable to|are unable to|am not able to"
    r"|are not able to) (?:\w+ ){0,2}(?:modify|change|cancel|refund|rebook|book|process"
    r"|upgrade|downgrade|transfer|add|remove|issue|extend|waive|make)\b"
    r"|нельзя|невозможно|не может быть \w+|не подлежит"
    r"|не (?:можем|могу) (?:\w+ )?(?:изменить|отменить|вернуть|оформить|перенести|сделать)",
    re.IGNORECASE,
)
# An offer of a human, a callback, or a request for contacts.
OFFER_CUES = re.compile(
    r"\b(?:manager|operator|human|agent|specialist|colleague|support team|customer service"
    r"|contact|phone|e-?mail|call you|reach you|get back to you|connect you|transfer you"
    r"|escalat\w*)\b|менеджер|оператор|специалист|сотрудник|коллег|свяж|контакт|телефон"
    r"|почт|перезвон|передам|переключ",
    re.IGNORECASE,
)
# An honest "I don't know" as the embedded judge reads it (faithful by its rubric).
DECLINE_CUES = re.compile(
    r"\b(i (?:do not|don't|dont) know|i(?:'m| am) not sure|i (?:cannot|can't|could not|"
    r"couldn't) (?:find|tell|say|confirm)|i (?:do not|don't) have (?:that|this|the) "
    r"information|no information (?:about|on))\b|не знаю|нет информации",
    re.IGNORECASE,
)

# --- gap statements ----------------------------------------------------------------------
# An honest statement that the context lacks something — "I couldn't find …", "the
# passages do not say …", "в документах нет сведений о …". It states nothing a context
# could support, so it is no claim for groundedness (a clause after it that does state a
# fact still is one). Narrower than REFUSAL_CUES: "I am unable to cancel it" refuses an
# action for a reason the context must hold; a gap statement is about information only.
_CONTEXT_NOUNS_EN = (
    r"(?:passages?|documents?|docs|sources?|context|texts?|excerpts?|snippets?|articles?"
    r"|search results?|results?|knowledge base|documentation|materials?|records?"
    r"|(?:provided|given|available|retrieved) (?:information|data))"
)
_CONTEXT_NOUNS_RU = (
    r"(?:документ\w{0,3}|источник\w{0,3}|текст\w{0,3}|фрагмент\w{0,3}|отрыв\w{0,3}"
    r"|материал\w{0,3}|контекст\w{0,2}|базе знаний|результат\w{0,3} поиска)"
)
GAP_CUES = re.compile(
    r"\b(?:i (?:could not|couldn't|cannot|can't|can not|did not|didn't|was unable to"
    r"|am unable to|wasn't able to|was not able to|am not able to) (?:find|locate|see|determine"
    r"|identify|answer|tell|say)\b"
    r"|(?:unable|not able) to (?:answer|determine|find|say|tell|identify|confirm)\b"
    r"|i (?:do not|don't|dont) (?:know|have (?:(?:that|this|any|the|enough|such) )?"
    r"(?:information|data|details))\b|i(?:'m| am) not (?:sure|certain|aware)\b"
    r"|(?:the |these |those |provided |given |available |retrieved |above |any of the )*"
    + _CONTEXT_NOUNS_EN
    + r" (?:provided |given |available |above )?(?:(?:do not|don't|does not|doesn't|did not"
    r"|didn't|fail to) (?:say|state|mention|contain|include|provide|specify|cover|give|offer"
    r"|indicate|discuss|address|describe|list|reference|explain|detail|show)"
    r"|(?:make|makes|contain|contains|include|includes|give|gives|provide|provides|offer"
    r"|offers|have|has|hold|holds) no)\b"
    r"|(?:is|are|was|were)(?:n't| not) (?:mentioned|specified|stated|provided|given|covered"
    r"|discussed|addressed|included|listed|indicated|described|found|available) (?:in|by|within)"
    r" (?:the |these |any |any of the )?(?:provided |given |available |retrieved )?"
    + _CONTEXT_NOUNS_EN
    + r"|(?:there is|there's|there are|i have|i found|with) no "
    r"(?:information|mention|details|record|indication)\b"
    r"|no (?:information|mention|details|data|indication) (?:of|about|on|regarding|for|as to)\b"
    r"|(?:it is|it's) (?:not (?:possible|clear)|impossible|unclear) (?:to (?:determine|say|tell"
    r"|know|answer|find)|whether|from|based|if|what|how|when|which|who)\b)"
    r"|не удалось (?:найти|обнаружить|определить|установить|выяснить)"
    r"|не (?:смог|смогла|могу|можем) (?:найти|определить|ответить|сказать|установить)"
    r"|(?:ничего )?не (?:нашёл|нашел|нашла|нашли|нашлось)|не знаю|не располагаю|не уверен"
    r"|затрудняюсь (?:ответить|сказать)|невозможно (?:определить|сказать|ответить|установить)"
    r"|нет (?:\w+ )?(?:информации|данных|сведений|упоминани\w*)"
    r"|(?:информации|данных|сведений|упоминани\w*) (?:\w+ ){0,4}нет\b"
    r"|(?:в|во) (?:\w+ ){0,2}" + _CONTEXT_NOUNS_RU + r" (?:\w+ ){0,3}?(?:нет|не (?:указан\w*"
    r"|упомина\w*|упомянут\w*|сказано|говорится|приводится|приведен\w*|содерж\w*|описан\w*))"
    r"|" + _CONTEXT_NOUNS_RU + r" (?:\w+ ){0,2}не (?:содерж\w*|упомина\w*|указыва\w*|говор\w*"
    r"|сообща\w*|описыва\w*)",
    re.IGNORECASE,
)
# Where a gap statement ends and a clause that may state a fact begins: "I couldn't find
# a flight on May 5, but there is one on May 6".
GAP_CLAUSE_BREAK = re.compile(
    r"\s*[;:—–]\s+|,?\s+(?:but|however|although|though|whereas|yet|instead|"
    r"но|однако|хотя|зато|тем не менее)\s+|,\s+а\s+",
    re.IGNORECASE,
)

# --- source references in words ------------------------------------------------------------
# A source named in words and a number — "(Passage 1)", "according to document 2", "see
# source [3]", "в источнике 2" — is a citation like "[2]", not a stated value "2". The
# nouns a source is named by, and the words that lead a reference in.
SOURCE_NOUNS = (
    r"(?:(?:retrieved|provided|given|cited|context) )?(?:passages?|documents?|docs?"
    r"|sources?|excerpts?|snippets?|search results?)"
    r"|(?:документ|источник|фрагмент|отрыв(?:ок|к)|пассаж)\w{0,3}"
)
SOURCE_LEADS = (
    r"according to|as (?:stated|mentioned|noted|shown|described|indicated|given|explained"
    r"|listed|reported) in|see(?: also)?|cf\.?|per|from|in|based on|refer to|as per"
    r"|согласно|в|во|из|по данным|см\.?|как (?:указано|сказано|говорится) в"
)

# --- tool errors ---------------------------------------------------------------------------
# What a tool error says about the call it rejects (aem.evidence.recovery). A *transient*
# error is about the service — a timeout, a 5xx, a rate limit, a dropped connection — so
# only the same call succeeding later recovers it; an *argument* error is about what the
# call asked for, so a later call that changes the argument it names is the fix.
TRANSIENT_ERROR_CUES = re.compile(
    r"\b(?:time[ds]? ?out|timed[ -]out|deadline exceeded|(?:http |status |error |code )?5\d\d"
    r"|429|rate[ -]?limit\w*|too many requests|throttl\w*|quota exceeded|(?:temporarily |service )"
    r"?unavailable|not available right now|overloaded|bad gateway|gateway time-?out"
    r"|connection (?:reset|refused|aborted|closed|error|lost|failed)|econn\w+|broken pipe"
    r"|network (?:error|unreachable)|(?:service|server|upstream|backend) (?:is )?(?:down|busy"
    r"|not responding|error)|try again later|internal server error"
    r"|(?:timeout|connection\w*|temporary\w*|service ?unavailable|ratelimit\w*)(?:error)?)\b"
    r"|тайм-?аут|превышен\w* врем\w* ожидания|врем\w* ожидания истекл\w*|недоступ\w*"
    r"|временн\w* (?:ошибк|сбо|недоступ)\w*|слишком много запросов|превышен\w* лимит\w*"
    r"|соединени\w* (?:сброшен|разорван|прервано|отклонен)\w*|ошибк\w* (?:соединения|сети)"
    r"|сервер\w* не отвечает|сервис\w* не отвечает|повторите (?:попытку )?позже",
    re.IGNORECASE,
)
ARGUMENT_ERROR_CUES = re.compile(
    r"\b(?:invalid|not valid|is not a valid|malformed|wrong|incorrect|bad (?:request|value"
    r"|argument|parameter|input)|not found|no such|does not exist|doesn't exist"
    r"|unknown (?!error|reason|failure|problem)\w+|(?:value|key|type|validation|lookup|index"
    r"|permission|notfound|invalid\w*|syntax)error|notfound\w*"
    r"|not (?:allowed|permitted|supported|eligible|applicable)|cannot be (?:used|applied"
    r"|combined|changed|modified|cancell?ed)|can't be (?:used|applied|changed)|(?:syntax|parse)"
    r" error|syntax|must (?:be|have|not)|required|missing|out of range|exceeds?|too (?:long"
    r"|short|large|small|many|few)|not enough|insufficient|does not (?:match|add up)"
    r"|no (?:route|seats?|flights?|availability|match|record|user|order|reservation)s?"
    r"|expected .{1,40} got)\b"
    r"|неверн\w*|некорректн\w*|недопустим\w*|недействительн\w*|не найден\w*|не существует"
    r"|нельзя|не (?:разрешен|допускается|поддерживается)\w*|запрещен\w*|синтаксическ\w*"
    r"|ошибк\w* синтаксиса|не может быть (?:использован|применен|изменен)\w*|обязательн\w*"
    r"|отсутству\w*|превышает|недостаточно|не хватает|неизвестн\w*",
    re.IGNORECASE,
)
# A tool error in which the world declines a well-formed request — no seats, not available
# on that date, sold out —: the call asked for something the world does not have. Told to
# the user and left alone, it is the world's answer, not the agent's failure
# (aem.evidence.recovery.reported_decline). Balances and limits are not here: the agent
# could read those before it asked.
WORLD_DECLINE_CUES = re.compile(
    r"\b(?:not available (?:on|for|at|in)\b|no longer available|sold out|fully booked"
    r"|(?:no|not enough) (?:available )?(?:seats?|rooms?|tickets?|vacanc\w+|availability"
    r"|capacity|stock|slots?)\b|out of stock)"
    r"|нет (?:свободных )?мест|недостаточно (?:свободных )?мест|мест нет|распродан\w*"
    r"|нет в наличии|недоступ\w* на (?:дату|это время)",
    re.IGNORECASE,
)
# What an error may call an argument instead of naming it ("no route for the given
# airports" names origin and destination): the beginnings of the words an error says, the
# words of the argument names that kind covers, and the shape of a value of that kind as
# written (case counts: "JFK" is an airport code, "ann" is not), if it has one.
ARGUMENT_KINDS: tuple[tuple[tuple[str, ...], tuple[str, ...], str | None], ...] = (
    (
        ("airport", "route", "аэропорт", "маршрут"),
        ("origin", "destination", "departure", "arrival", "airport"),
        r"[A-Z]{3}",
    ),
    (("date", "day", "дат", "день", "дня", "числ"), ("date", "day"), r"\d{4}-\d{2}-\d{2}.*"),
    (("time", "hour", "врем", "час"), ("time", "hour"), r"\d{1,2}:\d{2}(?::\d{2})?"),
    (
        ("amount", "sum", "price", "total", "balance", "fund", "сумм", "цен", "баланс", "средств"),
        ("amount", "price", "total", "sum", "cost", "balance"),
        None,  # a number alone may be any count: only the argument's name says "amount"
    ),
    (
        ("email", "e-mail", "mail", "адрес", "почт"),
        ("email", "mail", "address"),
        r"[^@\s]+@[^@\s]+",
    ),
)
# The verbs a tool's name starts with when a success changes state (books, updates, sends):
# a call repeated after such a success asks again of a changed world, so it is no loop
# (aem.metrics.tool_repetition). Read-only and general tools (search, bash) are not here.
STATE_CHANGING_VERBS = frozenset(
    {
        *("update", "modify", "change", "edit", "set", "create", "add", "insert", "book"),
        *("reserve", "cancel", "delete", "remove", "send", "submit", "transfer", "exchange"),
        *("return", "refund", "pay", "apply", "confirm", "approve", "reset", "enable"),
        *("disable", "login", "authenticate", "register", "upload", "write", "save", "move"),
        *("assign", "schedule", "grant", "revoke", "activate", "deactivate", "unlock"),
    }
)

# --- what a tool's name says it does -------------------------------------------------------
# Read or write, by the verb of a tool's name (aem.matching.effects): a call the case does
# not list passes tool_choice when its tool only reads. Ordinary verbs only, no tool name
# of any benchmark. A verb in neither list leaves the tool unknown, and an unknown tool is
# judged as one that writes: a false "it only reads" would hide a booking nobody asked for.
TOOL_READ_VERBS = frozenset(
    {
        *("get", "list", "search", "find", "fetch", "read", "lookup", "query", "show"),
        *("describe", "count", "calculate", "compute", "check", "view", "browse", "retrieve"),
        *("inspect", "preview", "peek", "locate", "explain", "summarize", "summarise"),
        *("validate", "verify", "estimate", "compare", "convert", "extract", "parse"),
        *("analyze", "analyse", "filter", "display", "discover", "explore", "measure"),
        *("is", "has", "exists"),
        # shell commands that only read
        *("ls", "pwd", "du", "df", "cat", "grep", "head", "tail", "wc", "stat", "tree"),
        *("whoami", "diff"),
        # verbs of tools that only produce text for the agent itself
        *("think", "reflect"),
    }
)
TOOL_WRITE_VERBS = STATE_CHANGING_VERBS | {
    *("put", "post", "patch", "append", "replace", "overwrite", "rename", "merge", "commit"),
    *("push", "publish", "deploy", "install", "uninstall", "purge", "clear", "drop"),
    *("truncate", "archive", "restore", "attach", "detach", "link", "unlink", "invite"),
    *("share", "comment", "reply", "forward", "notify", "email", "purchase", "buy", "sell"),
    *("trade", "checkout", "subscribe", "unsubscribe", "follow", "unfollow", "block", "ban"),
    *("close", "lock", "mark", "flag", "tag", "star", "pin", "upgrade", "downgrade"),
    *("rebook", "reschedule", "renew", "charge", "withdraw", "deposit", "invest", "sign"),
    *("logout", "import", "increment", "decrement", "allocate", "claim", "accept", "reject"),
    *("decline", "dismiss", "resolve", "enroll", "join", "leave", "unregister", "vote"),
    *("start", "stop", "restart", "terminate", "launch", "kill", "revert", "rollback"),
    *("tweet", "retweet", "release", "suspend", "resume"),
    # shell commands that change files
    *("mkdir", "rmdir", "rm", "mv", "cp", "touch", "chmod", "chown", "ln"),
}
# Two words read as one verb: "look up" reads, "check in" books a seat. A read verb
# followed by another particle ("get_out") leaves the tool unknown.
TOOL_PHRASAL_READ = frozenset({("look", "up"), ("find", "out")})
TOOL_PHRASAL_WRITE = frozenset(
    {
        *(("check", "in"), ("check", "out"), ("sign", "in"), ("sign", "up"), ("sign", "out")),
        *(("log", "in"), ("log", "out"), ("set", "up"), ("opt", "in"), ("opt", "out")),
        *(("top", "up"), ("back", "up"), ("clean", "up"), ("shut", "down"), ("turn", "on")),
        *(("turn", "off"), ("pay", "off"), ("roll", "back"), ("pick", "up"), ("drop", "off")),
    }
)
TOOL_VERB_PARTICLES = frozenset({"in", "out", "up", "off", "on", "over", "down", "back"})
# Words joining two actions in one name ("get_or_create"): every verb after one counts.
TOOL_NAME_CONJUNCTIONS = frozenset({"and", "or", "then", "plus"})
# Words before the verb that do not change what it does ("try_book", "batch_get").
TOOL_VERB_MODIFIERS = frozenset({"try", "batch", "bulk", "async", "safe", "do", "maybe"})

# --- an action reported as done, per language (aem.evidence.claimed_success) ---------------
# What a sentence says when it tells the user an action happened: the participle of the
# action's family ("gebucht", "reservada", "оформлен"), a completion that fits any action
# ("erfolgreich", "con éxito", "успешно"), or an id presented as the action's confirmation.
# Written as word beginnings (Spanish and Russian endings change with gender and case).
# Family by the verb of the tool's name; a verb in no family gets the completions alone.
ACTION_FAMILIES: dict[str, frozenset[str]] = {
    "book": frozenset({"book", "reserve", "schedule", "rebook", "reschedule", "confirm"}),
    "cancel": frozenset({"cancel", "delete", "remove", "void", "revoke", "terminate"}),
    "send": frozenset({"send", "email", "mail", "notify", "message", "forward", "share"}),
    "refund": frozenset({"refund", "reimburse", "return"}),
    "pay": frozenset({"pay", "charge", "purchase", "buy", "checkout"}),
    "change": frozenset({"update", "change", "modify", "edit", "set", "transfer", "exchange"}),
    "create": frozenset(
        {"create", "submit", "place", "order", "register", "add", "open", "file", "issue"}
    ),
}
DONE_PARTICIPLES: dict[str, dict[str, tuple[str, ...]]] = {
    "book": {
        "en": ("booked", "reserved", "scheduled", "confirmed", "rebooked", "rescheduled"),
        "de": ("gebucht", "reserviert", "bestätigt", "eingetragen", "vereinbart", "umgebucht"),
        "es": ("reservad", "confirmad", "agendad", "programad", "reservé", "agendé"),
        "ru": (
            *("забронирован", "оформлен", "подтвержден", "подтверждён", "записан"),
            *("забронировал", "оформил", "записал"),
        ),
    },
    "cancel": {
        "en": ("cancelled", "canceled", "deleted", "removed", "voided"),
        "de": ("storniert", "abgesagt", "gekündigt", "gelöscht"),
        "es": ("cancelad", "anulad", "eliminad", "cancelé", "anulé"),
        "ru": ("отменен", "отменён", "аннулирован", "удален", "удалён", "отменил", "удалил"),
    },
    "send": {
        "en": ("sent", "emailed", "mailed", "delivered", "forwarded"),
        "de": ("gesendet", "versendet", "verschickt", "versandt", "zugestellt"),
        "es": ("enviad", "remitid", "entregad", "envié"),
        "ru": ("отправлен", "выслан", "доставлен", "отправил", "выслал"),
    },
    "refund": {
        "en": ("refunded", "reimbursed", "returned"),
        "de": ("erstattet", "zurückerstattet", "gutgeschrieben"),
        "es": ("reembolsad", "devuelt", "abonad", "reembolsé", "devolví"),
        "ru": ("возвращен", "возвращён", "возмещен", "возмещён", "вернул", "возместил"),
    },
    "pay": {
        "en": ("paid", "charged", "purchased", "bought"),
        "de": ("bezahlt", "überwiesen", "abgebucht"),
        "es": ("pagad", "cobrad", "comprad", "pagué"),
        "ru": ("оплачен", "списан", "куплен", "оплатил", "списал"),
    },
    "change": {
        "en": ("changed", "modified", "transferred", "exchanged"),
        "de": ("geändert", "aktualisiert", "umgestellt", "übertragen"),
        "es": ("actualizad", "cambiad", "modificad", "transferid", "cambié"),
        "ru": (
            *("изменен", "изменён", "обновлен", "обновлён", "переведен", "переведён"),
            *("изменил", "обновил"),
        ),
    },
    "create": {
        "en": ("created", "submitted", "placed", "registered", "filed", "issued", "opened"),
        "de": ("erstellt", "angelegt", "eingereicht", "aufgegeben", "bestellt", "registriert"),
        "es": ("cread", "realizad", "registrad", "tramitad", "emitid", "enviad"),
        "ru": (
            *("создан", "размещен", "размещён", "зарегистрирован", "выписан", "создал"),
            *("отправлен", "подан"),
        ),
    },
}
# Completions that report any action as done. English has none here: its rule wants the
# tool's verb named beside a completion ("booking confirmed"), the verb being English.
DONE_COMPLETIONS: dict[str, tuple[str, ...]] = {
    "de": ("erfolgreich", "erledigt", "abgeschlossen", "durchgeführt"),
    "es": ("con éxito", "exitosamente", "correctamente", "completad", "listo", "lista"),
    "ru": ("успешно", "выполнен", "готово"),
}
# An id presented as the action's confirmation: "confirmation BK-4471", "Buchungsnummer".
CONFIRMATION_NOUNS: dict[str, tuple[str, ...]] = {
    "en": ("confirmation", "booking reference", "booking number", "reservation number"),
    "de": ("bestätigungsnummer", "buchungsnummer", "bestätigungscode", "buchungscode"),
    "es": ("confirmación", "número de reserva", "localizador", "código de reserva"),
    "ru": ("номер подтверждения", "код подтверждения", "номер брони", "номер бронирования"),
}
# What makes a sentence not a report of a done action, in any read language: negated,
# failed, future, conditional, a question or an offer. One union across the languages —
# a word of one language that blocks a sentence of another loses a claim, never a proof.
NOT_DONE_CUES: dict[str, str] = {
    "en": r"\b(?:not|never|no|unable|fail(?:ed|s|ure)?|error|unsuccessful(?:ly)?|"
    r"unfortunately|cannot|retry|again|will|would|going to|shall|can|could|should|may|"
    r"might|please|let me|if|once|whether|try|trying|attempt(?:ed|ing)?|need|needs|want|"
    r"wants)\b|n[’']t\b|[’']ll\b",
    "de": r"\b(?:nicht|kein\w*|leider|fehl\w*|konnte|könnte|werde|werden|wird|würde|"
    r"möchten|soll|sollte|sobald|falls|wenn|ob|erneut|versuch\w*|bitte)\b",
    "es": r"\b(?:no|nunca|error|fall\w*|lamentablemente|desafortunadamente|pud\w*|"
    r"pod\w*|intent\w*|voy|vamos|será|serán|estará|quiere|desea|si|cuando|"
    r"una vez|de nuevo|otra vez|por favor)\b",
    "ru": r"(?<!\w)(?:не|нет|ни|ошибк\w*|сбо\w*|к сожалению|буд\w*|смог\w*|мог\w*|"
    r"попроб\w*|попыт\w*|если|когда|как только|ли|снова|пожалуйста)(?!\w)",
}
