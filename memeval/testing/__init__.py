"""Test doubles that run for real on loopback (used by the test suite and by users' own tests)."""
