"""The formats argue-judge reads, one module each; every module registers its format with judge.formats.registry
when imported (the registry imports them all, in its BUILT_IN order)."""
