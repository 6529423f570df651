"""cudalens.labs"""
