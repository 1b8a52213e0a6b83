"""Security tests: the attacks of issue #31, and what stops them."""
