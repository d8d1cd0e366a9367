"""The learned injection detector's data, training and measurements (`python -m calibration.detector.<name>`)."""
