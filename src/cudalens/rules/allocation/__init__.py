"""M. Memory allocation: one module per catalog item."""
