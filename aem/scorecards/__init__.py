"""Level-2 scorecards: a conversation's total from the scores of its pipeline steps."""
