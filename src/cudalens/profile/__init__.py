"""cudalens.profile"""
