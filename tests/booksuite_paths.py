"""Where the book-suite test data lives: an unchanged copy inside the repo (Apache-2.0, LICENSE and SOURCE.md
beside it), so the tests never depend on a folder outside the checkout."""

from pathlib import Path

SUITE = Path(__file__).parent / "data" / "booksuite"
