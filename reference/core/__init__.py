"""Sans-IO protocol cores: no sockets and no clock inside (see api.py)."""
