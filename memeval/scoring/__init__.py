"""memeval.scoring"""
