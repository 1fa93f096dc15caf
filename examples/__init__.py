"""Small runnable examples for AEM (see each folder's README)."""
