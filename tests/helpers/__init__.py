"""What the test modules share: readable builders, the caches under test, the repository's paths."""
