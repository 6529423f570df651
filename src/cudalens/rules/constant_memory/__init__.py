"""K. Constant and texture memory: one module per catalog item."""
