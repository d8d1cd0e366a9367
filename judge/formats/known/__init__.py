"""The formats argue-judge reads, one module each; every module registers its format with judge.formats.registry
when imported, and the registry imports every module of this folder: a new format is a new module here."""
