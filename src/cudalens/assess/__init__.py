"""cudalens.assess"""
