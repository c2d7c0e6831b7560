"""Checks of submitted work before review (DESIGN.md section 13, docs/checks.md): declarative rules
(``rules``), a Harbor-style verifier (``verifier``, its bundle in ``bundle``) run in a sandbox
(``sandbox``), and the receipts that let a check be replayed."""
