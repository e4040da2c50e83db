"""memeval.multiturn"""
