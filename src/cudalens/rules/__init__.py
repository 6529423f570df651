"""Rules: one module per catalog chapter (A, T, X, G, SH, L, K, E, I, D, M, Y); see registry."""

from cudalens.rules.registry import RULES, RuleSpec, load_all, rule, run_rules

__all__ = ["RULES", "RuleSpec", "load_all", "rule", "run_rules"]
