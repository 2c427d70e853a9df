"""Growable arrays handed to numpy (nothing public)."""
