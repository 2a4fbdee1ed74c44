"""framing"""
