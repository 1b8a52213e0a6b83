"""SQL adapters (SQLAlchemy 2 async): SQLite through aiosqlite, Postgres through asyncpg."""
