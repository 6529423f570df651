"""G. Global memory: one module per catalog item."""
