"""memeval.run"""
