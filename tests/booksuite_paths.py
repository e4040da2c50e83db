"""Where the book-suite test data lives: a copy inside the repo (Apache-2.0, LICENSE and SOURCE.md beside
it), and the shared original when the checkout sits next to it (absent on a clean CI clone)."""

from pathlib import Path

SUITE = Path(__file__).parent / "data" / "booksuite"
SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "external" / "ai-agent-book-ch3"
