"""A. Assess and scale: one module per catalog item."""
