"""memeval.analysis"""
