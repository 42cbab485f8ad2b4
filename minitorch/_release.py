"""minitorch's own release (the package's version; pyproject.toml reads it from here)."""
RELEASE = "0.1.0"
