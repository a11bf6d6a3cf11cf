"""Deliberately broken caches that prove the checks have teeth: seeded bugs and races."""
