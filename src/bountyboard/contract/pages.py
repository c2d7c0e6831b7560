"""Page sizes of the list routes (DESIGN.md section 4): what ``pageSize`` defaults to and may reach."""

from __future__ import annotations

PAGE_SIZE_DEFAULT = 20
PAGE_SIZE_MAX = 100
PAGE_NUMBER_MAX = 100_000
