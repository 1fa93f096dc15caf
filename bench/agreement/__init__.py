"""One command that scores AEM on every development set, tune and check halves side by side."""
