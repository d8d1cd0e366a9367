"""Pack an experiment's per-item outputs into one deterministic .tar.xz, or unpack one to read or extend it.

    python -m calibration.archive pack calibration/redteam-heldout calibration/experiments/redteam-heldout.tar.xz
    python -m calibration.archive pack calibration/detector/flip-unseen \
        calibration/detector/flip-unseen/batches.tar.xz --members 'batch-*'
    python -m calibration.archive unpack calibration/experiments/redteam-heldout.tar.xz calibration/

`pack` stores the files under DIR (or only the top-level entries matching --members, relative to DIR; without it,
under DIR's own name) sorted by name, with mtime 0, owner 0 and modes 644/755, so packing the same files twice
gives the same bytes; then removes what it packed (--keep leaves it). `unpack` extracts into a folder, refusing
members that would land outside it.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tarfile
from pathlib import Path


def _normalised(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
    info.mode = 0o755 if info.isdir() or info.mode & 0o100 else 0o644
    return info


def pack(folder: Path, archive: Path, members: list[str] | None = None, keep: bool = False) -> list[Path]:
    """Archive `folder` (or its top-level entries matching `members`) into `archive`; the packed paths."""
    if members:
        roots = sorted({p for pattern in members for p in folder.glob(pattern)})
        base = folder
    else:
        roots, base = [folder], folder.parent
    if not roots:
        raise SystemExit(f"{folder}: nothing matches {members}")
    files = sorted(p for root in roots for p in ([root] if root.is_file() else root.rglob("*")) if p.is_file())
    archive.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(archive, "w:xz", preset=9) as tar:
        for path in files:
            tar.add(path, arcname=path.relative_to(base).as_posix(), recursive=False, filter=_normalised)
    if not keep:
        for root in roots:
            shutil.rmtree(root) if root.is_dir() else root.unlink()
    return files


def unpack(archive: Path, into: Path) -> None:
    with tarfile.open(archive, "r:xz") as tar:
        tar.extractall(into, filter="data")  # "data": no absolute paths, no escaping `into`, no devices


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    packing = commands.add_parser("pack")
    packing.add_argument("folder", type=Path)
    packing.add_argument("archive", type=Path)
    packing.add_argument("--members", nargs="+", help="top-level entries of FOLDER to pack (glob patterns)")
    packing.add_argument("--keep", action="store_true", help="leave the packed files in place")
    unpacking = commands.add_parser("unpack")
    unpacking.add_argument("archive", type=Path)
    unpacking.add_argument("into", type=Path)
    args = parser.parse_args()
    if args.command == "pack":
        if not args.folder.is_dir():
            sys.exit(f"{args.folder}: not a folder")
        files = pack(args.folder, args.archive, args.members, args.keep)
        print(f"{args.archive}: {len(files)} files, {args.archive.stat().st_size} bytes")
    else:
        if not args.archive.is_file():
            sys.exit(f"{args.archive}: no such archive")
        unpack(args.archive, args.into)


if __name__ == "__main__":
    main()
