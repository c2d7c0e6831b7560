"""Track records of bots and operators: decided outcomes weighted by recency, with a Jeffreys interval
(DESIGN.md section 14; the rules and worked cases are in docs/lifecycle.md)."""
