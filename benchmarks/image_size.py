"""The evaluation image's size against its floor, the base image it is built on (python:3.11-slim),
measured in the same run: what an organizer uploads is the image, so every package it installs counts.

    python benchmarks/image_size.py            # sizes of the built image (./build.sh rare25) and of its base
    python benchmarks/image_size.py --full     # and the compressed upload (docker save | gzip -1, as export.sh)

Needs a Docker engine and the image; without them it says what was not measured and exits 0 (the smoke
run in CI may come before the image build has finished).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import zlib

from harness import parse

BASE = "python:3.11-slim"
MIB = 2**20
BEFORE = 986  # MB: every challenge's image before requirements.txt held only what runs (lifelines, edt, matplotlib)


def image_bytes(tag: str) -> int | None:
    """The image's size as ``docker image inspect`` reports it, None when there is no such image or engine."""
    if shutil.which("docker") is None:
        return None
    run = subprocess.run(["docker", "image", "inspect", tag, "--format", "{{.Size}}"], capture_output=True, text=True)
    return int(run.stdout) if run.returncode == 0 else None


def compressed_bytes(tag: str) -> int:
    """The size of ``docker save`` through gzip level 1 (export.sh's default), streamed: nothing on disk."""
    save = subprocess.Popen(["docker", "save", tag], stdout=subprocess.PIPE)
    assert save.stdout is not None
    stream = zlib.compressobj(1, zlib.DEFLATED, 31)  # wbits 31: the gzip format
    total = sum(len(stream.compress(chunk)) for chunk in iter(lambda: save.stdout.read(16 * MIB), b""))
    total += len(stream.flush())
    if save.wait() != 0:
        raise SystemExit(f"docker save {tag} failed")
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--challenge", default=None, help="the image evaluation-CHALLENGE (default rare25)")
    parser.add_argument("--compress", action=argparse.BooleanOptionalAction, default=None)
    arguments = parse(parser, {"challenge": "rare25", "compress": False}, {"challenge": "rare25", "compress": True})
    tag = f"evaluation-{arguments.challenge}"
    size, base = image_bytes(tag), image_bytes(BASE)
    if size is None or base is None:
        print(f"image size: not measured ({tag if size is None else BASE} not found, or no Docker engine)")
        return
    print(f"{BASE}: {base / 1e6:.0f} MB (the floor)")
    print(f"{tag}: {size / 1e6:.0f} MB = {size / base:.2f}x the base image, {(size - base) / 1e6:.0f} MB above it")
    print(f"  before the runtime-only requirements: {BEFORE} MB; now {size / 1e6 / BEFORE:.2f}x that")
    if arguments.compress:
        print(f"  compressed upload (docker save | gzip -1): {compressed_bytes(tag) / 1e6:.0f} MB")


if __name__ == "__main__":
    main()
