"""What reproduces a shipped artefact, run from the checkout's root as modules (`python -m calibration.detector.train`,
`python -m calibration.archive`); calibration/README.md lists them. Not installed with argue-judge (the wheel holds
`judge` only)."""
