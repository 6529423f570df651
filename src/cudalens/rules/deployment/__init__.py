"""Y. Deployment and correctness: one module per catalog item."""
