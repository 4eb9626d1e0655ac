"""Tests of the fusion passes (passes/fusion)."""
