"""The evaluation image's size against its floor, the base image it is built on (python:3.11-slim),
measured in the same run: what an organizer uploads is the image, so every package it installs counts.

    python benchmarks/image_size.py            # sizes of the built images (./build.sh rare25, kits-example), the base
    python benchmarks/image_size.py --full     # and the compressed uploads (docker save | gzip -1, as export.sh)

A challenge that reads no image (rare25) gets an image without the medical-image packages
(requirements-images.txt, evaluation/image_packages.py); one with image outputs (kits-example) holds them.

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
    parser.add_argument("--challenges", nargs="+", default=None,
                        help="the images evaluation-CHALLENGE (default: rare25, which reads no image, and "
                             "kits-example, which holds the medical-image packages)")  # fmt: skip
    parser.add_argument("--compress", action=argparse.BooleanOptionalAction, default=None)
    both = ["rare25", "kits-example"]
    arguments = parse(parser, {"challenges": both, "compress": False}, {"challenges": both, "compress": True})
    base = image_bytes(BASE)
    if base is None:
        print(f"image size: not measured ({BASE} not found, or no Docker engine)")
        return
    print(f"{BASE}: {base / 1e6:.0f} MB (the floor)")
    for challenge in arguments.challenges:
        tag = f"evaluation-{challenge}"
        size = image_bytes(tag)
        if size is None:
            print(f"{tag}: not measured (no such image: ./build.sh {challenge})")
            continue
        print(
            f"{tag}: {size / 1e6:.0f} MB = {size / base:.2f}x the base image, {(size - base) / 1e6:.0f} MB above it; "
            f"{size / 1e6 / BEFORE:.2f}x the {BEFORE} MB of every image before the runtime-only requirements"
        )
        if arguments.compress:
            print(f"  compressed upload (docker save | gzip -1): {compressed_bytes(tag) / 1e6:.0f} MB")


if __name__ == "__main__":
    main()
