"""The injection defence: the detector that flags text addressing the evaluator (`injection`), the quarantine
that withholds flagged pieces of documents from the model (`quarantine`), and the flags recorded per sentence
(`flags`). Imports the kernel and `formats/` only."""
