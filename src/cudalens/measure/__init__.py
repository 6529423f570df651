"""cudalens.measure"""
