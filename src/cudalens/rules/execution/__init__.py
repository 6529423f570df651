"""E. Execution configuration: one module per catalog item."""
