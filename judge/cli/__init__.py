"""The command line: typer commands parse options, call the library (judge.run.evaluate, judge.calibration,
judge.baselines), and print; diagnostics are rendered once at the end. May import anything; nothing imports it."""
