"""Plumbing that a reader never needs to learn the algorithm: reading run logs and plotting curves."""
