"""Embedding throughput benchmark: AEM compare_many vs raw model.encode."""
