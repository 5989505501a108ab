"""Tests that start a local Spark session (marker ``spark``)."""
