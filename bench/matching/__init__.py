"""Tool-set matching workload and benchmark (AEM beside agentevals and deepeval)."""
