"""Generated sessions with extra look-ups and extra state changes across tool vocabularies."""
