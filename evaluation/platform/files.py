"""What may be opened, and how big it may be: the only way submitted files are read.

A submission is hostile until checked (issue 15). Every rule here runs BEFORE a byte of the file
is read by anyone (us, SimpleITK, Pillow):

- **Containment.** The input root is resolved first (the platform may stage ``/input`` itself as a
  symlink, sagemaker-shim's ``..._USE_LINKED_INPUT``); a path is then resolved with every symlink
  followed and must stay inside that root (``contained``). A link that stays inside may be
  followed; a link that leaves is refused without opening its target.
- **Regular files only.** A FIFO, socket, device or folder where a file is expected is refused from
  ``os.stat`` (which opens nothing), and files are opened with ``O_NONBLOCK | O_NOFOLLOW`` and
  checked again with ``fstat``: a FIFO can never hang the run.
- **Size.** A JSON document is refused above ``MAX_JSON_BYTES`` from its size alone (a 20 GB sparse
  file is never read). An image's header is parsed here (a few hundred bytes) and its declared
  voxel data must fit in the memory the process may use (``memory_budget``: the RLIMIT_DATA that
  sagemaker-shim sets from ``GRAND_CHALLENGE_COMPONENT_MAX_MEMORY_MB``, else the machine's memory)
  and, for uncompressed data, in the file itself.
- **Self-contained images.** A MetaImage ``.mha`` must keep its voxels in itself
  (``ElementDataFile = LOCAL``): an external data file, a ``LIST`` or a file pattern would make
  ITK open files this module never checked (the ground truth, a system file). NIfTI must be the
  single-file kind (magic ``n+1`` / ``n+2``), not an ``.hdr``/``.img`` pair. Format specifications:
  ITK MetaIO (``Modules/ThirdParty/MetaIO/src/MetaIO/src/metaImage.cxx``: header keys,
  ``ElementDataFile`` last), NIfTI-1/-2 (``nifti1.h``, ``nifti2.h``), PNG (RFC 2083, IHDR), TIFF
  (TIFF 6.0 part 1: header, IFDs; BigTIFF: the 16-byte header and 20-byte entries). A TIFF's image
  file directories are walked here with bounded reads: a small compressed TIFF may declare
  100000 x 100000 pixels (a decompression bomb); ITK reads every page as one slice of the first
  page's size, so all pages times the largest is what it may allocate. Any other suffix is refused
  (ITK would pick a reader by content: NRRD can name external data files, JPEG and BMP are unbounded
  here).
"""

from __future__ import annotations

import gzip
import math
import os
import re
import resource
import stat
import struct
import zlib
from pathlib import Path
from typing import BinaryIO

from evaluation.errors import ConfigurationError, SubmissionError

MAX_JSON_BYTES = 64 * 2**20  # a value or JSON-file output; far above any honest one
MAX_PREDICTIONS_BYTES = 256 * 2**20  # predictions.json also carries every Value output inline
HEADER_BYTES = 64 * 2**10  # a MetaImage header longer than this is not an image header

FILE_KINDS = {
    stat.S_IFDIR: "a folder",
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFLNK: "a symbolic link",
}
METAIMAGE_ELEMENT_BYTES = {
    "MET_CHAR": 1, "MET_UCHAR": 1, "MET_SHORT": 2, "MET_USHORT": 2, "MET_INT": 4, "MET_UINT": 4,
    "MET_LONG": 4, "MET_ULONG": 4, "MET_LONG_LONG": 8, "MET_ULONG_LONG": 8, "MET_FLOAT": 4, "MET_DOUBLE": 8,
}  # fmt: skip
# nifti1.h's DT_* codes -> bytes a voxel: the reader allocates by datatype, whatever bitpix says
NIFTI_DATATYPE_BYTES = {
    2: 1, 4: 2, 8: 4, 16: 4, 32: 8, 64: 8, 128: 3, 256: 1, 512: 2, 768: 4, 1024: 8, 1280: 8, 1536: 16,
    1792: 16, 2048: 32, 2304: 4,
}  # fmt: skip
# IHDR colour type -> samples per pixel as read: a palette (3) becomes RGB in SimpleITK (Pillow keeps 1 byte)
PNG_CHANNELS = {0: 1, 2: 3, 3: 3, 4: 2, 6: 4}
IMAGE_FORMATS = ".mha, .nii, .nii.gz, .png, .tif or .tiff"  # what check_image_file can bound (the readers' suffixes)
TIFF_MAX_PAGES = 2**16  # a mask or label volume has far fewer; more is a directory chain to walk, not an image
TIFF_MAX_ENTRIES = 2**16 - 1  # tags in one directory (classic TIFF's count is 16-bit; BigTIFF's is bounded so)
TIFF_LAYOUTS = {False: ("H", 12, "I"), True: ("Q", 20, "Q")}  # BigTIFF? -> (entry count, entry size, offset)
TIFF_INTEGERS = {3: "H", 4: "I", 16: "Q"}  # field type -> struct code: SHORT, LONG, LONG8
MAX_DATA_FILES = 2**16  # the data files a detached image header may name by pattern (one a slice)
# such a pattern: one integer conversion, its width and precision below 1,000 (``slice%03d.raw``; a "%c" of a large
# number or a "%999999999d" would raise or fill the memory before any name is checked)
DATA_FILE_PATTERN = r"[^%]*%[-+ #0]*\d{0,3}(?:\.\d{0,3})?[diouxX][^%]*"
TIFF_TAGS = {256: "width", 257: "height", 258: "bits", 262: "photometric", 277: "samples"}


def not_there(path: Path, folder: bool) -> str:
    """Why ``path`` is not the folder (``folder``) or file an organizer named, as the end of a sentence:
    it does not exist, is the other kind, or is a symbolic link that leads nowhere (or to itself)."""
    if path.is_symlink() and not path.exists():
        return "is a symbolic link to nothing (or to itself)"
    if not path.exists():
        return "does not exist"
    if path.is_dir():
        return "is a folder, not a file"
    return "is a file, not a folder" if folder else "is not a regular file"


def data_limit() -> int | None:
    """The soft RLIMIT_DATA in bytes (what sagemaker-shim applies per process), ``None`` if unlimited."""
    soft, _ = resource.getrlimit(resource.RLIMIT_DATA)
    return None if soft == resource.RLIM_INFINITY else int(soft)


def memory_budget() -> tuple[int, str]:
    """(bytes a process may use, how to say so): the data limit in force, else the machine's memory."""
    limit = data_limit()
    if limit is not None:
        return limit, f"the memory limit in force ({limit / 2**20:.0f} MiB)"
    physical = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    return physical, f"this machine's memory ({physical / 2**30:.1f} GiB)"


def _megabytes(size: int) -> str:
    return f"{size / 2**20:.1f} MiB" if size >= 2**20 else f"{size} bytes"


def contained(root: Path, relative: str | Path, case: str | None = None) -> Path:
    """``root / relative`` with every symlink resolved (``root`` itself first), refusing any path
    that ends up outside ``root``; nothing is opened."""
    return Path(contained_in(os.path.realpath(root), relative, case))


def contained_in(resolved_root: str, relative: str | Path, case: str | None = None) -> str:
    """``contained`` below a root already resolved (``os.path.realpath``), as text: a caller that checks
    many paths below one root resolves it once, and a prefix test replaces pathlib's walk over parents."""
    try:
        candidate = os.path.realpath(os.path.join(resolved_root, relative))
    except ValueError:  # an embedded NUL byte
        raise SubmissionError(f"the output path {str(relative)!r} is not a valid file name.", case) from None
    if not below(resolved_root, candidate):
        raise SubmissionError(f"the output path '{relative}' points outside the input folder.", case)
    return candidate


def below(resolved_root: str, resolved: str) -> bool:
    """Whether the resolved path ``resolved`` is ``resolved_root`` or inside it (both ``os.path.realpath``'s text)."""
    return resolved == resolved_root or resolved.startswith(os.path.join(resolved_root, ""))


def regular_size(path: Path, what: str, case: str | None = None, max_bytes: int | None = None) -> int:
    """The size of ``path`` after checking, from ``os.stat`` alone, that it is a regular file of at
    most ``max_bytes``; an error naming ``what`` otherwise."""
    try:
        status = os.stat(path)
    except OSError:
        raise SubmissionError(f"{what} cannot be found.", case) from None
    return _checked_size(status, what, case, max_bytes)


def _checked_size(status: os.stat_result, what: str, case: str | None, max_bytes: int | None) -> int:
    if not stat.S_ISREG(status.st_mode):
        kind = FILE_KINDS.get(stat.S_IFMT(status.st_mode), "not a regular file")
        raise SubmissionError(f"{what} is {kind}, not a regular file; it was not read.", case)
    if max_bytes is not None and status.st_size > max_bytes:
        raise SubmissionError(
            f"{what} is {_megabytes(status.st_size)}, more than the {_megabytes(max_bytes)} allowed; it was not read.",
            case,
        )
    return status.st_size


def read_bytes(path: Path, what: str, case: str | None = None, max_bytes: int | None = MAX_JSON_BYTES) -> bytes:
    """The bytes of a checked regular file (``path`` already ``contained``): stat first, then an
    open that cannot block or follow a link, ``fstat`` again, and at most ``max_bytes`` read."""
    regular_size(path, what, case, max_bytes)
    with _open(path, what, case, max_bytes) as stream:
        return stream.read(-1 if max_bytes is None else max_bytes)


def read_named(path: Path, max_bytes: int = MAX_JSON_BYTES) -> bytes:
    """The bytes of a file an organizer names on a command line (a metrics.json, a provenance
    record, a ranking's metrics file): the one bounded reader of every tool. Its links are followed
    (the organizer's own), then the checks of a submitted file apply: a FIFO, device or folder is
    refused from ``os.stat`` (a FIFO never hangs the tool), a file above ``max_bytes`` from its size
    (a 20 GB sparse file is never read); else a one-line ``ConfigurationError`` naming ``path``."""
    try:
        resolved = Path(os.path.realpath(path))
        os.stat(resolved)
    except (OSError, ValueError) as error:
        raise ConfigurationError(f"{path} cannot be read ({getattr(error, 'strerror', None) or error}).") from None
    try:
        return read_bytes(resolved, str(path), max_bytes=max_bytes)
    except SubmissionError as error:
        raise ConfigurationError(str(error)) from None


def open_binary(path: Path, what: str, case: str | None = None, max_bytes: int | None = None) -> BinaryIO:
    """A checked regular file of at most ``max_bytes`` opened for reading in binary (a stream to
    hash), without blocking or following a final link."""
    return _open(path, what, case, max_bytes)


def _open(path: Path, what: str, case: str | None, max_bytes: int | None = None) -> BinaryIO:
    """``path`` opened for reading without blocking (a FIFO) or following a final link, and checked
    again as a regular file of at most ``max_bytes`` on the open descriptor."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        raise SubmissionError(f"{what} cannot be opened.", case) from None
    stream = os.fdopen(descriptor, "rb")
    try:
        _checked_size(os.fstat(descriptor), what, case, max_bytes)
    except SubmissionError:
        stream.close()
        raise
    return stream


# ------------------------------------------------------------------------------------------- images


def _refuse(what: str, case: str | None, why: str) -> SubmissionError:
    return SubmissionError(f"{what} could not be read: {why}.", case)


def _metaimage_header(head: bytes, what: str, case: str | None) -> tuple[dict[str, str], int]:
    """The ``Key = Value`` lines of a MetaImage header up to ``ElementDataFile`` (always the last
    key), and the header's length in bytes."""
    fields: dict[str, str] = {}
    position = 0
    while True:
        end = head.find(b"\n", position)
        if end < 0 and not fields:
            raise _refuse(what, case, "it does not start with a MetaImage header")
        if end < 0:
            raise _refuse(what, case, "its MetaImage header does not end with an ElementDataFile line")
        line = head[position:end].decode("latin-1").strip()
        position = end + 1
        if not line:
            continue
        key, sep, value = line.partition("=")
        if not sep:
            raise _refuse(what, case, "it does not start with a MetaImage header")
        key = key.strip()
        if key.lower() == "elementdatafile":  # the last key, however it is spelled
            fields["ElementDataFile"] = value.strip()
            return fields, position
        fields[key] = value.strip()


def image_data_files(path: Path, opened: Path, what: str) -> list[str]:
    """The other files ITK opens to read the image ``path`` (``opened``: it with its links followed, read here
    without following one): a detached MetaImage or NRRD header's data files (``ElementDataFile`` / ``data
    file``: one name, a ``LIST`` of names on the lines after it, or a numbered pattern ``name%03d.raw first last
    step``; MetaIO's ``metaImage.cxx``, the NRRD format's "detached headers"), an Analyze / NIfTI ``.hdr``'s
    ``.img``; a relative name is taken from the header's folder as ITK takes it (``path``'s, links not followed).
    ``[]`` for a self-contained image or a header that does not parse (ITK then opens nothing else). A
    ``ValueError``: a pattern that cannot be expanded (so not checked)."""
    name, folder = path.name.lower(), path.parent
    if name.endswith((".hdr", ".hdr.gz")):
        base = str(path)[: -len(".hdr.gz") if name.endswith(".gz") else -len(".hdr")]
        return [base + suffix for suffix in (".img", ".IMG", ".img.gz")]
    if name.endswith((".mha", ".mhd")):
        key = "elementdatafile"
    elif name.endswith((".nrrd", ".nhdr")):
        key = "data file"
    else:
        return []
    with _open(opened, what, None) as stream:
        head = stream.read(HEADER_BYTES).decode("latin-1")
    lines = [line.partition("=" if key == "elementdatafile" else ":") for line in head.splitlines()]
    number = next((n for n, (field, sep, _) in enumerate(lines) if sep and field.strip().lower() in
                   (key, key.replace(" ", ""))), None)  # fmt: skip
    value = "" if number is None else lines[number][2].strip()
    if value.upper() == "LOCAL" or not value:
        return []
    if value.upper().startswith("LIST"):
        named = ["".join(line).strip() for line in lines[number + 1 :] if "".join(line).strip()]
    elif "%" in value:
        pattern, *numbers = value.split()
        first, last, step = (int(n) for n in numbers[:3]) if len(numbers) >= 3 else (0, -1, 0)
        if step == 0 or abs((last - first) // step) >= MAX_DATA_FILES or not re.fullmatch(DATA_FILE_PATTERN, pattern):
            raise ValueError(value)
        named = [pattern % index for index in range(first, last + (1 if step > 0 else -1), step)]
    else:
        named = [value]
    return [os.path.join(folder, data) for data in named]


def _metaimage_bytes(path: Path, size: int, what: str, case: str | None) -> int:
    """The declared voxel bytes of a self-contained ``.mha``; external data files are refused."""
    with _open(path, what, case) as stream:
        head = stream.read(HEADER_BYTES)
    fields, header_length = _metaimage_header(head, what, case)
    data_file = fields["ElementDataFile"]
    if data_file.lower() != "local":
        raise _refuse(
            what, case, "its MetaImage header names an external data file (ElementDataFile must be LOCAL: "
            "only a self-contained .mha is accepted)"
        )  # fmt: skip
    try:
        dims = [int(v) for v in fields["DimSize"].split()]
        channels = int(fields.get("ElementNumberOfChannels", "1"))
        element = METAIMAGE_ELEMENT_BYTES[fields["ElementType"]]
    except (KeyError, ValueError):
        raise _refuse(what, case, "its MetaImage header lacks a valid DimSize or ElementType") from None
    if not dims or min(dims) < 1 or channels < 1:
        raise _refuse(what, case, "its MetaImage header declares an empty or negative size")
    declared = math.prod(dims) * channels * element
    _fits_in_memory(declared, what, case)
    if fields.get("CompressedData", "False").lower() != "true":
        _holds(declared, size - header_length, what, case)
    return declared


def _holds(declared: int, held: int, what: str, case: str | None) -> None:
    """Uncompressed voxel data must be in the file: ITK fills what is missing with zeros, silently."""
    if declared > held:
        raise _refuse(
            what, case, f"its header declares {declared} bytes of voxel data but the file holds {max(held, 0)}"
        )


def _nifti_bytes(path: Path, size: int, what: str, case: str | None) -> int:
    """The declared voxel bytes of a single-file NIfTI-1/-2 (``.nii``/``.nii.gz``): the larger of
    ``datatype``'s and ``bitpix``'s voxel size (a header may contradict itself); an uncompressed
    file must hold them after ``vox_offset`` (at least the header's own size)."""
    compressed = path.name.lower().endswith(".gz")
    try:
        with _open(path, what, case) as stream:
            if compressed:
                with gzip.GzipFile(fileobj=stream) as unpacked:
                    head = unpacked.read(544)
            else:
                head = stream.read(544)
    except (OSError, EOFError, zlib.error):
        raise _refuse(what, case, "it is not a readable NIfTI file") from None
    for order in "<>":
        if len(head) >= 348 and struct.unpack(f"{order}i", head[:4])[0] == 348:
            magic, dims, types = head[344:348], struct.unpack(f"{order}8h", head[40:56]), head[70:74]
            offset = struct.unpack(f"{order}f", head[108:112])[0]
            break
        if len(head) >= 540 and struct.unpack(f"{order}i", head[:4])[0] == 540:
            magic, dims, types = head[4:8], struct.unpack(f"{order}8q", head[16:80]), head[12:16]
            offset = struct.unpack(f"{order}q", head[168:176])[0]
            break
    else:
        raise _refuse(what, case, "it does not start with a NIfTI header")
    if magic not in (b"n+1\0", b"n+2\0"):
        raise _refuse(what, case, "it is not a single-file NIfTI image (an .hdr/.img pair or Analyze header)")
    rank, extents = dims[0], dims[1 : 1 + max(0, min(dims[0], 7))]
    if rank < 1 or min(extents, default=0) < 1:
        raise _refuse(what, case, "its NIfTI header declares an empty or negative size")
    datatype, bitpix = struct.unpack(f"{order}hh", types)
    declared = math.prod(extents) * max(1, bitpix // 8, NIFTI_DATATYPE_BYTES.get(datatype, 0))
    _fits_in_memory(declared, what, case)
    if not compressed:
        header_size = struct.unpack(f"{order}i", head[:4])[0]
        _holds(declared, size - (max(header_size, int(offset)) if math.isfinite(offset) else header_size), what, case)
    return declared


def _png_bytes(path: Path, what: str, case: str | None) -> int:
    with _open(path, what, case) as stream:
        head = stream.read(33)
    if len(head) < 33 or head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        raise _refuse(what, case, "it does not start with a PNG header")
    width, height, depth, colour = struct.unpack(">IIBB", head[16:26])
    declared = width * height * PNG_CHANNELS.get(colour, 4) * max(1, depth // 8)
    _fits_in_memory(declared, what, case)
    return declared


def _tiff_integers(stream: BinaryIO, order: str, entry: bytes, big: bool, size: int) -> tuple[int, ...]:
    """The integer values of one IFD entry (inline, or at the offset it holds when they do not fit);
    other field types give ``()``."""
    kind, count = struct.unpack(f"{order}H{'Q' if big else 'I'}", entry[2 : 12 if big else 8])
    code = TIFF_INTEGERS.get(kind)
    if code is None or count < 1 or count > TIFF_MAX_ENTRIES:
        return ()
    length = count * struct.calcsize(code)
    field = entry[12:20] if big else entry[8:12]
    if length > len(field):
        (offset,) = struct.unpack(order + ("Q" if big else "I"), field)
        if offset + length > size:
            return ()
        stream.seek(offset)
        field = stream.read(length)
    return struct.unpack(f"{order}{count}{code}", field[:length])


def _tiff_bytes(path: Path, size: int, what: str, case: str | None) -> int:
    """The bytes ITK may allocate for a TIFF: pages x the largest page's width x height x bytes a
    pixel (8/16/32-bit one-sample grey as is; anything else, bilevel, colour, palette, YCbCr, at
    least 4: libtiff's RGBA decoder, which ITK uses for the layouts it does not read directly)."""
    with _open(path, what, case) as stream:
        head = stream.read(16)
        order = {b"II": "<", b"MM": ">"}.get(head[:2], "")
        version = struct.unpack(f"{order}H", head[2:4])[0] if order and len(head) >= 8 else 0
        if version == 42:
            big, offset = False, struct.unpack(f"{order}I", head[4:8])[0]
        elif version == 43 and len(head) == 16 and struct.unpack(f"{order}HH", head[4:8]) == (8, 0):
            big, offset = True, struct.unpack(f"{order}Q", head[8:16])[0]
        else:
            raise _refuse(what, case, "it does not start with a TIFF header")
        count_code, entry_size, offset_code = TIFF_LAYOUTS[big]
        count_size, offset_size = struct.calcsize(count_code), struct.calcsize(offset_code)
        seen: set[int] = set()
        largest = 0
        while offset:
            if offset in seen:
                raise _refuse(what, case, "its TIFF directories form a loop")
            if len(seen) == TIFF_MAX_PAGES:
                raise _refuse(what, case, f"it has more than {TIFF_MAX_PAGES} TIFF pages")
            seen.add(offset)
            stream.seek(offset)
            counted = stream.read(count_size)
            entries = struct.unpack(order + count_code, counted)[0] if len(counted) == count_size else -1
            end = offset + count_size + entries * entry_size + offset_size
            if entries < 0 or entries > TIFF_MAX_ENTRIES or end > size:
                raise _refuse(what, case, "a TIFF directory lies beyond the end of the file")
            block = stream.read(end - offset - count_size)
            tags: dict[str, tuple[int, ...]] = {}
            for start in range(0, entries * entry_size, entry_size):
                entry = block[start : start + entry_size]
                name = TIFF_TAGS.get(struct.unpack(f"{order}H", entry[:2])[0])
                if name is not None:
                    tags[name] = _tiff_integers(stream, order, entry, big, size)
            width, height = tags.get("width", (0,))[:1], tags.get("height", (0,))[:1]
            if not width or not height or min(width[0], height[0]) < 1:
                raise _refuse(what, case, "its TIFF header lacks a valid ImageWidth or ImageLength")
            samples, bits = (tags.get("samples") or (1,))[0], max(tags.get("bits") or (1,))
            pixel = samples * math.ceil(bits / 8)
            if samples != 1 or bits not in (8, 16, 32) or (tags.get("photometric") or (-1,))[0] not in (0, 1):
                pixel = max(pixel, 4)
            largest = max(largest, width[0] * height[0] * pixel)
            _fits_in_memory(len(seen) * largest, what, case)
            offset = struct.unpack(order + offset_code, block[-offset_size:])[0]
    if not seen:
        raise _refuse(what, case, "its TIFF header lacks a valid ImageWidth or ImageLength")
    return len(seen) * largest


def _fits_in_memory(declared: int, what: str, case: str | None) -> None:
    budget, described = memory_budget()
    if declared > budget:
        raise _refuse(what, case, f"its header declares {_megabytes(declared)} of voxel data, more than {described}")


def check_image_file(path: Path, what: str, case: str | None = None) -> int:
    """Check an image file before any reader opens it; returns its declared (or on-disk) bytes.

    ``.mha``, ``.nii``/``.nii.gz``, ``.png`` and ``.tif``/``.tiff`` headers are parsed (see the
    module docstring); a detached ``.mhd`` header and any other suffix are refused.
    """
    size = regular_size(path, what, case)
    name = path.name.lower()
    if name.endswith(".mhd"):
        raise _refuse(what, case, "it is a detached MetaImage header (.mhd); only a self-contained .mha is accepted")
    if name.endswith(".mha"):
        return _metaimage_bytes(path, size, what, case)
    if re.search(r"\.nii(\.gz)?$", name):
        return _nifti_bytes(path, size, what, case)
    if name.endswith(".png"):
        return _png_bytes(path, what, case)
    if name.endswith((".tif", ".tiff")):
        return _tiff_bytes(path, size, what, case)
    raise _refuse(what, case, f"it is not a {IMAGE_FORMATS} image file")
