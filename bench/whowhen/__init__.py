"""Who&When failure attribution: which agent and which step AEM's earliest root cause names."""
