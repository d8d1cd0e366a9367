"""The embedded offline judge: its weights (`weights`: located, assembled and verified, importing no model client),
the llama.cpp runtime (`runtime`, `kernels`, `sampling`), the worker process that holds the model (`worker`,
`worker_runtime`) and the litellm provider in front of it (`provider`). Importing this package loads nothing."""
