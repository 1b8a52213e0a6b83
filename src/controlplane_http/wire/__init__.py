"""msgspec wire types: requests forbid unknown fields; responses mirror the domain explicitly."""
