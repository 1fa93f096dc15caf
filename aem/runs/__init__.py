"""Applications over runs: comparing two audits (``diff``), finding where a re-run first
did something else (``divergence``), agreement with people's labels (``agreement``) and
the gates a run must pass (``gates``). Each reads reports and sessions; none is read by
the evaluation below it.
"""
