"""Adapters for hosted memory APIs over plain httpx (``rest.py`` is what they share): Zep Cloud
(``zep``), Supermemory (``supermemory``) and the mem0 platform (``mem0-platform``). Each is tested
against a loopback contract server (``memeval.testing.hosted_servers``); none was run against the
live service here."""
