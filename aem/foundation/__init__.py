"""The foundation floor: what every other part of AEM builds on and which imports none
of it — the data model (spans, turns, results, reports), the plug-in kernel, the HTTP
client, word lists, the per-session cache, strict settings bases, provenance and
denominators, text search, the GC pause and terminal-safe text.

Why a folder: these modules are the bottom layer of the import contract; keeping them
together makes "nothing here imports upward" one rule about one folder.
"""
