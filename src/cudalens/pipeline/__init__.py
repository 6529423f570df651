"""The analysis pipeline: parse → model → compile → join → rules → confirm → serialize."""
