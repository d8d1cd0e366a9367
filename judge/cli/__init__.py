"""The command line: typer commands parse options, call the library, and print."""
