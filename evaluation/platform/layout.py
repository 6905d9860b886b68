"""Write a submission in the platform's exact ``/input`` layout (for demos, tests and organizers).

``predictions.json`` lists one job per ``JobSpec``; job and image pks are UUIDs derived from a seed,
so the same call gives the same bytes. Outputs go to ``<job pk>/output/<relative_path>``: a Value
socket's JSON both in its file and inline, a File socket's JSON in its file (``file`` a URL), an
image socket as a folder holding ``<image pk><suffix>``. See ../shared/spec/platform.md.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluation.platform.predictions import PREDICTIONS_FILE, Socket

MEDIA_URL = "https://grand-challenge.org/media/components/componentinterfacevalue"


def derived_uuid(seed: int, *parts: object) -> str:
    """A version-4-shaped UUID determined by ``seed`` and ``parts``."""
    digest = hashlib.sha256(":".join(map(str, (seed, *parts))).encode()).digest()
    return str(uuid.UUID(bytes=digest[:16], version=4))


@dataclass
class JobSpec:
    """One algorithm job: input sockets with the case file names, outputs with their content.

    An output is a JSON-able value (Value/File sockets) or the ``Path`` of an image file (Image
    sockets); a socket left out gives a job without that output.
    """

    inputs: Mapping[Socket, str]
    outputs: Mapping[Socket, Any] = field(default_factory=dict)


def _suffix(path: Path) -> str:
    name = path.name.lower()
    return ".nii.gz" if name.endswith(".nii.gz") else path.suffix.lower()


def _socket_json(socket: Socket, pk: int) -> dict[str, Any]:
    return {
        "pk": pk,
        "value": None,
        "file": None,
        "image": None,
        "interface": {
            "slug": socket.slug,
            "kind": socket.kind,
            "super_kind": socket.super_kind,
            "relative_path": socket.relative_path,
        },
    }


def write_input(root: Path, jobs: Sequence[JobSpec], seed: int = 0) -> list[str]:
    """Write ``root/predictions.json`` and every job's outputs; returns the job pks in order."""
    root.mkdir(parents=True, exist_ok=True)
    document, pks = [], []
    value_pk = 1000 * (seed % 1000)
    for index, spec in enumerate(jobs):
        pk = derived_uuid(seed, "job", index)
        pks.append(pk)
        inputs, outputs = [], []
        for socket, name in spec.inputs.items():
            value_pk += 1
            entry = _socket_json(socket, value_pk)
            entry["image"] = {"pk": derived_uuid(seed, "input", index, socket.slug), "name": name}
            inputs.append(entry)
        for socket, content in spec.outputs.items():
            value_pk += 1
            entry = _socket_json(socket, value_pk)
            target = root / pk / "output" / socket.relative_path
            if socket.super_kind == "Image":
                image_pk = derived_uuid(seed, "output", index, socket.slug)
                entry["image"] = {"pk": image_pk, "name": Path(content).name}
                target.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(content, target / f"{image_pk}{_suffix(Path(content))}")
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(json.dumps(content), encoding="utf-8")
                if socket.super_kind == "File":
                    entry["file"] = f"{MEDIA_URL}/{value_pk}/{Path(socket.relative_path).name}"
                else:
                    entry["value"] = content
            outputs.append(entry)
        document.append({"pk": pk, "status": "Succeeded", "inputs": inputs, "outputs": outputs})
    (root / PREDICTIONS_FILE).write_text(json.dumps(document, indent=2), encoding="utf-8")
    return pks
